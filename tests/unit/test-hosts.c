/* The pool of hypervisors (lib/case/hosts.c) without one: its probe is
 * replaced by the test's, which can hold callers until a number of them
 * are inside it, so that runs interleave as they do when a gate's images
 * (or arches) ask for a host at the same moment.  Each test names hosts of
 * its own: the pool is the process's. */
#include "config.h"

#include "case/hosts-private.h"

#include <glib.h>
#include <string.h>

/* Probes of hosts whose URI begins with "hold:" wait (up to 10 s) until
 * two callers are inside a probe of that host; "cannot:" hosts say they
 * cannot run the arch; the others emulate it. */
static GMutex probe_lock;
static GCond probe_cond;
static GHashTable *inside;     /* uri → callers that entered its probe */
static guint n_probes;

static AirlockHostSupport
test_probe (const char *uri, const char *cache_dir, AirlockArch arch, GError **error)
{
  g_mutex_lock (&probe_lock);
  n_probes++;
  if (g_str_has_prefix (uri, "hold:"))
    {
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (inside, uri)) + 1;
      gint64 deadline = g_get_monotonic_time () + 10 * G_TIME_SPAN_SECOND;

      g_hash_table_insert (inside, (gpointer) g_intern_string (uri), GUINT_TO_POINTER (n));
      g_cond_broadcast (&probe_cond);
      while (GPOINTER_TO_UINT (g_hash_table_lookup (inside, uri)) < 2)
        if (!g_cond_wait_until (&probe_cond, &probe_lock, deadline))
          break;
    }
  g_mutex_unlock (&probe_lock);
  if (g_str_has_prefix (uri, "cannot:"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: no QEMU for %s", uri,
                   airlock_arch_to_string (arch));
      return AIRLOCK_HOST_CANNOT;
    }
  return AIRLOCK_HOST_TCG;
}

typedef struct {
  const char *const *uris;
  guint slots;
  char *chosen;
  GError *error;
} Acquire;

static gpointer
acquire_thread (gpointer data)
{
  Acquire *a = data;

  char *chosen = airlock_hosts_acquire (a->uris, a->slots, NULL, AIRLOCK_ARCH_AMD64, NULL,
                                       &a->error);

  g_atomic_pointer_set (&a->chosen, chosen);
  return NULL;
}

/* A slot of @uris, taken at once (the hosts of these tests never fail). */
static char *
take (const char *const *uris, guint slots)
{
  return airlock_hosts_acquire (uris, slots, NULL, AIRLOCK_ARCH_AMD64, NULL, NULL);
}

/* Two runs ask a pool of two hosts of one slot each at once, both probing
 * each host together (the probe lets go of the pool's lock): one run per
 * host.  Before the scan started again after a probe, both took the
 * first. */
static void
test_one_run_per_slot_while_probing (void)
{
  static const char *const uris[] = { "hold:first-1", "hold:second-1", NULL };
  Acquire a = { uris, 1 }, b = { uris, 1 };
  GThread *ta = g_thread_new ("a", acquire_thread, &a);
  GThread *tb = g_thread_new ("b", acquire_thread, &b);

  g_thread_join (ta);
  g_thread_join (tb);
  g_assert_no_error (a.error);
  g_assert_no_error (b.error);
  g_assert_nonnull (a.chosen);
  g_assert_nonnull (b.chosen);
  g_assert_cmpstr (a.chosen, !=, b.chosen);
  /* Both probed both hosts together: the interleaving this is about. */
  g_assert_cmpuint (GPOINTER_TO_UINT (g_hash_table_lookup (inside, "hold:second-1")), ==, 2);
  airlock_hosts_release (a.chosen);
  airlock_hosts_release (b.chosen);
  g_free (a.chosen);
  g_free (b.chosen);
}

/* A full pool makes the next run wait; a slot given back is its. */
static void
test_full_pool_waits_for_a_slot (void)
{
  static const char *const uris[] = { "free:one-2", "free:two-2", NULL };
  g_autofree char *x = take (uris, 1);
  g_autofree char *y = take (uris, 1);
  Acquire c = { uris, 1 };
  GThread *tc;

  g_assert_cmpstr (x, ==, "free:one-2");
  g_assert_cmpstr (y, ==, "free:two-2");
  tc = g_thread_new ("c", acquire_thread, &c);
  g_usleep (200 * 1000);
  /* Still waiting: nothing was given back. */
  g_assert_null (g_atomic_pointer_get (&c.chosen));
  airlock_hosts_release (y);
  g_thread_join (tc);
  g_assert_no_error (c.error);
  g_assert_cmpstr (c.chosen, ==, "free:two-2");
  airlock_hosts_release (x);
  airlock_hosts_release (c.chosen);
  g_free (c.chosen);
}

/* Two slots on a host: two runs there before the next host is used. */
static void
test_slots_fill_in_list_order (void)
{
  static const char *const uris[] = { "free:one-3", "free:two-3", NULL };
  g_autofree char *x = take (uris, 2);
  g_autofree char *y = take (uris, 2);
  g_autofree char *z = take (uris, 2);

  g_assert_cmpstr (x, ==, "free:one-3");
  g_assert_cmpstr (y, ==, "free:one-3");
  g_assert_cmpstr (z, ==, "free:two-3");
  airlock_hosts_release (x);
  airlock_hosts_release (y);
  airlock_hosts_release (z);
}

/* A host that cannot run the arch is passed over; the one a run failed on
 * is avoided; a pool where none can says each host's reason. */
static void
test_cannot_and_avoid (void)
{
  static const char *const uris[] = { "cannot:a-4", "free:b-4", "free:c-4", NULL };
  static const char *const none[] = { "cannot:x-4", "cannot:y-4", NULL };
  g_autoptr (GError) error = NULL;
  g_autofree char *x = take (uris, 1);
  g_autofree char *y = airlock_hosts_acquire (uris, 1, NULL, AIRLOCK_ARCH_AMD64, "free:b-4", NULL);
  g_autofree char *z = NULL;

  g_assert_cmpstr (x, ==, "free:b-4");
  g_assert_cmpstr (y, ==, "free:c-4");
  airlock_hosts_release (x);
  airlock_hosts_release (y);
  z = airlock_hosts_acquire (none, 1, NULL, AIRLOCK_ARCH_AMD64, NULL, &error);
  g_assert_null (z);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "no hypervisor of the pool can run amd64 guests"));
  g_assert_nonnull (strstr (error->message, "cannot:x-4: no QEMU for amd64"));
  g_assert_nonnull (strstr (error->message, "cannot:y-4: no QEMU for amd64"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  inside = g_hash_table_new (g_str_hash, g_str_equal);
  airlock_hosts_set_probe_func (test_probe);
  g_test_add_func ("/hosts/one-run-per-slot-while-probing", test_one_run_per_slot_while_probing);
  g_test_add_func ("/hosts/full-pool-waits-for-a-slot", test_full_pool_waits_for_a_slot);
  g_test_add_func ("/hosts/slots-fill-in-list-order", test_slots_fill_in_list_order);
  g_test_add_func ("/hosts/cannot-and-avoid", test_cannot_and_avoid);
  return g_test_run ();
}
