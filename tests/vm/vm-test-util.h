/* What the VM test programs (test-boot.c, test-supervisor.c,
 * test-image-run.c) each wrote: the guest image of an arch built once per
 * process (or the test skipped with the reason), a VM booted with every
 * step asserted, and the difference between the records a run made and
 * the ones it must make.  Header-only. */
#pragma once

#include <airlock.h>

#include <string.h>

/* The guest images a test program built, per arch, or why it could not. */
typedef struct {
  AirlockGuestImage *images[AIRLOCK_N_ARCHES];
  char *errors[AIRLOCK_N_ARCHES];
} VmTestImages;

/* @cache's guest image of @arch, built with @options on first use.  NULL
 * after marking the test skipped: "no ARCH @what: REASON" (@what is "guest
 * image", or says what more the image holds). */
static inline AirlockGuestImage *
vm_test_guest_image (VmTestImages *cache, AirlockArch arch,
                     const AirlockGuestImageOptions *options, const char *what)
{
  if (!cache->images[arch] && !cache->errors[arch])
    {
      g_autoptr (GError) error = NULL;

      cache->images[arch] = airlock_guest_image_ensure (arch, options, &error);
      if (!cache->images[arch])
        cache->errors[arch] = g_strdup (error->message);
    }
  if (!cache->images[arch])
    {
      g_autofree char *msg = g_strdup_printf ("no %s %s: %s", airlock_arch_to_string (arch), what,
                                              cache->errors[arch]);
      g_test_skip (msg);
    }
  return cache->images[arch];
}

static inline void
vm_test_images_clear (VmTestImages *cache)
{
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      g_clear_pointer (&cache->images[a], airlock_guest_image_free);
      g_clear_pointer (&cache->errors[a], g_free);
    }
}

/* A VM of @arch on @image with @options, run to its end; every step must
 * succeed. */
static inline AirlockVm *
vm_test_run (AirlockArch arch, AirlockGuestImage *image, const AirlockVmOptions *options)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockVm) vm = NULL;

  vm = airlock_vm_new (arch, image, options, &error);
  g_assert_no_error (error);
  g_assert_true (airlock_vm_run (vm, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&vm);
}

static inline int
vm_test_compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Sorts @got and @want (arrays of key lines, a multiset each) and appends
 * to @diff a line per difference: "unexpected: LINE" for one only @got
 * has, "missing:    LINE" for one only @want has.  @diff stays as it was
 * when they are the same. */
static inline void
vm_test_diff_lines (GPtrArray *got, GPtrArray *want, GString *diff)
{
  guint i = 0, j = 0;

  g_ptr_array_sort (got, vm_test_compare_strings);
  g_ptr_array_sort (want, vm_test_compare_strings);
  /* A merge of the two sorted lists. */
  while (i < got->len || j < want->len)
    {
      int cmp = i == got->len ? 1 : j == want->len ? -1 : strcmp (got->pdata[i], want->pdata[j]);

      if (cmp == 0)
        i++, j++;
      else if (cmp < 0)
        g_string_append_printf (diff, "\n  unexpected: %s", (const char *) got->pdata[i++]);
      else
        g_string_append_printf (diff, "\n  missing:    %s", (const char *) want->pdata[j++]);
    }
}
