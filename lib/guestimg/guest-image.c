/* The guest image cache (guest-image.h): airlock_guest_image_ensure()
 * finds the base image (kernel + initramfs) for an arch's inputs in
 * <cache>/guest/<arch>/, or builds it there under the arch's lock — the
 * kernel stage first (kernel-stage.c, reused while the kernel and the
 * modules list stay), then the initramfs of the guest programs and the
 * stage's files — and then its testroot and shell variants
 * (initramfs-variant.c).  What the keys cover is inputs.c's; how an entry
 * is locked, built aside and moved in is cache-dir.c's. */
#include "config.h"

#include "guestimg/guest-image.h"
#include "cache-dir-private.h"
#include "fsutil-private.h"

#include "guestimg/bzimage-private.h"
#include "guestimg/cpio-private.h"
#include "guestimg/inputs-private.h"
#include "guestimg/kernel-stage-private.h"
#include "guestimg/manifest-private.h"
#include "guestimg/testroot-private.h"
#include "guestimg/shell-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <unistd.h>

G_DEFINE_QUARK (airlock-guest-image-error-quark, airlock_guest_image_error)

void
airlock_guest_image_free (AirlockGuestImage *image)
{
  if (!image)
    return;
  g_free (image->dir);
  g_free (image->kernel_path);
  g_free (image->initramfs_path);
  g_free (image->manifest_path);
  g_free (image->kernel_release);
  g_free (image->kernel_sha256);
  g_free (image->initramfs_sha256);
  g_free (image->kernel_source);
  g_free (image);
}

/* The arch directory <cache>/guest/<arch> as a cache directory: the base
 * images, their kernel stages and the initramfs variants, all built under
 * its one lock. */
static AirlockCacheDir
arch_cache (AirlockGuestInputs *in, const AirlockGuestImageOptions *options)
{
  return (AirlockCacheDir) { in->arch_dir, AIRLOCK_GUEST_IMAGE_ERROR,
                             AIRLOCK_GUEST_IMAGE_ERROR_FAILED, options->progress,
                             options->progress_data };
}

static void
cpio_progress (guint done, guint total, gpointer user_data)
{
  const AirlockGuestImageOptions *options = user_data;

  if (options->progress)
    options->progress ("write initramfs", done, total, options->progress_data);
}

/* Builds the image into the empty directory @tmp from the kernel stage in
 * @stage_dir (described by @build, which gains the initramfs): the kernel,
 * linked, and an initramfs of the guest programs and the stage's files. */
static gboolean
build_image (AirlockGuestInputs *in, const char *stage_dir, AirlockGuestBuild *build,
             const char *tmp, const AirlockGuestImageOptions *options, GError **error)
{
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();
  g_autofree char *kernel_src = g_build_filename (stage_dir, build->kernel_file, NULL);
  g_autofree char *kernel_out = g_build_filename (tmp, build->kernel_file, NULL);
  g_autofree char *initramfs_out = g_build_filename (tmp, AIRLOCK_GUEST_INITRAMFS_FILE, NULL);
  g_autofree char *manifest_out = g_build_filename (tmp, AIRLOCK_GUEST_MANIFEST_FILE, NULL);
  g_autoptr (GFile) initramfs_file = g_file_new_for_path (initramfs_out);
  g_autoptr (GFileOutputStream) file_out = NULL;
  g_autoptr (GOutputStream) out = NULL;
  GStatBuf st;

  /* The kernel is the stage's, byte for byte: a hard link costs nothing
   * (same filesystem: both live under the arch directory). */
  if (link (kernel_src, kernel_out) < 0)
    {
      g_autoptr (GFile) src = g_file_new_for_path (kernel_src);
      g_autoptr (GFile) dest = g_file_new_for_path (kernel_out);

      if (!g_file_copy (src, dest, G_FILE_COPY_NONE, NULL, NULL, NULL, error))
        return FALSE;
    }

  for (guint i = 0; i < in->n_programs; i++)
    if (!airlock_cpio_add_file (cpio, in->programs[i].path, in->programs[i].mode,
                                in->programs[i].host_path, error))
      return FALSE;
  for (guint i = 0; i < build->files->len; i++)
    {
      AirlockGuestFile *f = build->files->pdata[i];
      g_autofree char *source = g_build_filename (stage_dir, f->path, NULL);

      if (!airlock_cpio_add_file (cpio, f->path, 0644, source, error))
        return FALSE;
    }
  file_out = g_file_create (initramfs_file, G_FILE_CREATE_NONE, NULL, error);
  if (!file_out)
    return FALSE;
  out = g_buffered_output_stream_new_sized (G_OUTPUT_STREAM (file_out), 1 << 20);
  if (!airlock_cpio_write (cpio, out, cpio_progress, (gpointer) options, error)
      || !g_output_stream_close (out, NULL, error))
    {
      g_prefix_error (error, "cannot write initramfs '%s': ", initramfs_out);
      return FALSE;
    }
  if (g_stat (initramfs_out, &st) < 0)
    {
      const AirlockCacheDir cd = arch_cache (in, options);

      return airlock_cache_set_io_error (&cd, error, errno, "read", initramfs_out);
    }
  build->initramfs_size = st.st_size;
  build->initramfs_sha256 = airlock_sha256_file (initramfs_out, error);
  if (!build->initramfs_sha256)
    return FALSE;

  /* Last: the manifest's mtime vouches for the files written before it. */
  return airlock_guest_manifest_write (in, build, manifest_out, error);
}

/* Serialises builders of one arch across processes.  Returns the locked
 * fd (closing it unlocks), or -1 with @error set. */
static int
lock_arch (AirlockGuestInputs *in, const AirlockGuestImageOptions *options, GError **error)
{
  const AirlockCacheDir cd = arch_cache (in, options);
  g_autofree char *stage = g_strdup_printf ("wait for another airlock building the %s guest image",
                                            airlock_arch_to_string (in->arch));

  return airlock_cache_lock (&cd, stage, error);
}

/* Moves the finished @tmp to @dir in one step, so a reader sees the old
 * image or the new one, never a mix. */
static gboolean
install_build (AirlockGuestInputs *in, const AirlockGuestImageOptions *options, const char *tmp,
               const char *dir, GError **error)
{
  const AirlockCacheDir cd = arch_cache (in, options);

  return airlock_cache_install (&cd, tmp, dir, "guest image", error);
}

static char *
make_build_dir (AirlockGuestInputs *in, const AirlockGuestImageOptions *options, GError **error)
{
  const AirlockCacheDir cd = arch_cache (in, options);

  return airlock_cache_new_build (&cd, TRUE, "a build directory", error);
}

/* The kernel stage for @in in @stage_dir, extracted now unless a good one
 * is there (and not forced).  Called with the arch lock held. */
static AirlockGuestBuild *
ensure_kernel_stage (AirlockGuestInputs *in, const char *stage_dir,
                     const AirlockGuestImageOptions *options, GError **error)
{
  g_autofree char *why = NULL;
  g_autofree char *tmp = NULL;
  AirlockGuestBuild *stage = NULL;

  if (!options->force)
    {
      stage = airlock_guest_stage_load (in, stage_dir, &why);
      if (stage)
        return stage;
    }
  tmp = make_build_dir (in, options, error);
  if (!tmp)
    return NULL;
  if (!airlock_guest_kernel_stage_build (in, tmp, options, error)
      || !install_build (in, options, tmp, stage_dir, error))
    {
      airlock_rm_rf (tmp);
      return NULL;
    }
  g_clear_pointer (&why, g_free);
  stage = airlock_guest_stage_load (in, stage_dir, &why);
  if (!stage)
    g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                 "the %s kernel stage just extracted in '%s' does not check out: %s",
                 airlock_arch_to_string (in->arch), stage_dir, why);
  return stage;
}

/* Callers match on AIRLOCK_GUEST_IMAGE_ERROR codes only: GLib's own I/O
 * errors on the way (their messages already say what failed) become
 * AIRLOCK_GUEST_IMAGE_ERROR_FAILED. */
static void
propagate_in_domain (GError **error, GError *local_error)
{
  if (local_error->domain != AIRLOCK_GUEST_IMAGE_ERROR)
    {
      local_error->domain = AIRLOCK_GUEST_IMAGE_ERROR;
      local_error->code = AIRLOCK_GUEST_IMAGE_ERROR_FAILED;
    }
  g_propagate_error (error, local_error);
}

/* The base image (kernel + initramfs) for @arch; @ret_in gets its inputs. */
static AirlockGuestImage *
ensure_base_image (AirlockArch arch, const AirlockGuestImageOptions *options,
                   AirlockGuestInputs **ret_in, GError **error)
{
  g_autoptr (AirlockGuestInputs) in = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *stage_dir = NULL;
  g_autofree char *why = NULL;
  g_autofree char *tmp = NULL;
  g_autoptr (AirlockGuestBuild) stage = NULL;
  g_autoptr (GError) local_error = NULL;
  AirlockGuestImage *image = NULL;
  int lock_fd;

  in = airlock_guest_inputs_load (arch, options, &local_error);
  if (!in)
    {
      propagate_in_domain (error, g_steal_pointer (&local_error));
      return NULL;
    }
  dir = g_build_filename (in->arch_dir, in->key, NULL);
  stage_dir = g_strdup_printf ("%s/kernel-%s", in->arch_dir, in->kernel_key);

  if (!options->force || options->offline)
    {
      image = airlock_guest_manifest_load (in, dir, &why);
      if (image || options->offline)
        {
          if (!image && in->pin)
            g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,
                         "no usable %s guest image for these inputs in '%s': %s; build it with "
                         "'airlock images build --arch %s'", airlock_arch_to_string (arch),
                         dir, why, airlock_arch_to_string (arch));
          else if (!image)
            g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,
                         "no usable %s guest image for these inputs in '%s': %s; build it with "
                         "'airlock images build --arch %s --kernel %s --modules %s'",
                         airlock_arch_to_string (arch), dir, why, airlock_arch_to_string (arch),
                         in->custom_kernel, in->custom_modules_dir);
          if (image)
            *ret_in = g_steal_pointer (&in);
          return image;
        }
    }

  if (g_mkdir_with_parents (in->arch_dir, 0755) < 0)
    {
      const AirlockCacheDir cd = arch_cache (in, options);

      airlock_cache_set_io_error (&cd, error, errno, "create cache directory", in->arch_dir);
      return NULL;
    }
  lock_fd = lock_arch (in, options, error);
  if (lock_fd < 0)
    return NULL;

  /* Whoever held the lock before us may have built this very image. */
  if (!options->force)
    {
      g_clear_pointer (&why, g_free);
      image = airlock_guest_manifest_load (in, dir, &why);
      if (image)
        goto out;
    }

  {
    const AirlockCacheDir cd = arch_cache (in, options);

    airlock_cache_remove_stale (&cd);
  }
  stage = ensure_kernel_stage (in, stage_dir, options, &local_error);
  if (!stage)
    {
      propagate_in_domain (error, g_steal_pointer (&local_error));
      goto out;
    }
  tmp = make_build_dir (in, options, &local_error);
  if (!tmp
      || !build_image (in, stage_dir, stage, tmp, options, &local_error)
      || !install_build (in, options, tmp, dir, &local_error))
    {
      if (tmp)
        airlock_rm_rf (tmp);
      propagate_in_domain (error, g_steal_pointer (&local_error));
      goto out;
    }
  g_clear_pointer (&why, g_free);
  image = airlock_guest_manifest_load (in, dir, &why);
  if (!image)
    g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                 "the %s guest image just built in '%s' does not check out: %s",
                 airlock_arch_to_string (arch), dir, why);

out:
  close (lock_fd);
  if (image)
    *ret_in = g_steal_pointer (&in);
  return image;
}

/* An initramfs variant: the base image's initramfs (or the variant before
 * it) with one more archive appended, cached in <arch>/PREFIX-<key>/. */
typedef struct {
  const char *what;          /* "testroot", "static shell": messages */
  const char *prefix;        /* the cache directory's name before the key */
  const char *stage;         /* the progress stage of a build */
  gboolean (*cache_load) (const char *dir, const char *key, char **ret_path, char **ret_sha256,
                          char **ret_why);
  /* Writes the variant of @base_path into @tmp from @recipe (the loaded
   * testroot or shell recipe). */
  gboolean (*build) (gpointer recipe, const char *key, const char *base_path,
                     const char *base_sha256, const char *downloads, const char *tmp,
                     AirlockProgressFunc progress, gpointer progress_data, GError **error);
} InitramfsVariant;

static gboolean
build_testroot (gpointer recipe, const char *key, const char *base_path, const char *base_sha256,
                const char *downloads, const char *tmp, AirlockProgressFunc progress,
                gpointer progress_data, GError **error)
{
  return airlock_testroot_build (recipe, key, base_path, base_sha256, downloads, tmp, progress,
                                 progress_data, error);
}

static gboolean
build_shell (gpointer recipe, const char *key, const char *base_path, const char *base_sha256,
             const char *downloads, const char *tmp, AirlockProgressFunc progress,
             gpointer progress_data, GError **error)
{
  return airlock_shell_tools_build (recipe, key, base_path, base_sha256, downloads, tmp, progress,
                                    progress_data, error);
}

static const InitramfsVariant testroot_variant = {
  "testroot", "testroot", "write testroot", airlock_testroot_cache_load, build_testroot,
};
static const InitramfsVariant shell_variant = {
  "static shell", "shell", "write shell", airlock_shell_tools_cache_load, build_shell,
};

/* Points @image at variant @v of its initramfs for @recipe, whose cache key
 * is @key (it covers the initramfs it builds on and every input of the
 * recipe, the pins of its packages included; those are downloaded into
 * <cache>/downloads/ like the kernel's, only to build): found in the cache,
 * or built now under the arch's lock (or rebuilt with options->force).
 * Returns FALSE with @error set. */
static gboolean
ensure_variant (AirlockGuestInputs *in, AirlockGuestImage *image,
                const AirlockGuestImageOptions *options, const InitramfsVariant *v,
                gpointer recipe, const char *key, GError **error)
{
  g_autoptr (GError) local_error = NULL;
  g_autofree char *name = g_strdup_printf ("%s-%s", v->prefix, key);
  g_autofree char *dir = g_build_filename (in->arch_dir, name, NULL);
  g_autofree char *tmp = NULL;
  g_autofree char *why = NULL;
  g_autofree char *path = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *downloads = g_build_filename (in->cache_dir, "downloads", NULL);
  gboolean ok = FALSE;
  int lock_fd;

  if (!options->force || options->offline)
    {
      ok = v->cache_load (dir, key, &path, &sha256, &why);
      if (!ok && options->offline)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT,
                       "no usable %s %s for these inputs in '%s': %s; build it by "
                       "running without --offline", airlock_arch_to_string (in->arch), v->what,
                       dir, why);
          return FALSE;
        }
    }
  if (!ok)
    {
      lock_fd = lock_arch (in, options, error);
      if (lock_fd < 0)
        return FALSE;
      g_clear_pointer (&why, g_free);
      /* Whoever held the lock before us may have built it. */
      if (!options->force)
        ok = v->cache_load (dir, key, &path, &sha256, &why);
      if (!ok)
        {
          if (options->progress)
            options->progress (v->stage, 0, 0, options->progress_data);
          tmp = make_build_dir (in, options, &local_error);
          if (!tmp
              || !v->build (recipe, key, image->initramfs_path, image->initramfs_sha256, downloads,
                            tmp, options->progress, options->progress_data, &local_error)
              || !install_build (in, options, tmp, dir, &local_error))
            {
              if (tmp)
                airlock_rm_rf (tmp);
              close (lock_fd);
              propagate_in_domain (error, g_steal_pointer (&local_error));
              return FALSE;
            }
          g_clear_pointer (&why, g_free);
          ok = v->cache_load (dir, key, &path, &sha256, &why);
          if (!ok)
            g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                         "the %s %s just built in '%s' does not check out: %s",
                         airlock_arch_to_string (in->arch), v->what, dir, why);
        }
      close (lock_fd);
      if (!ok)
        return FALSE;
    }
  g_free (image->initramfs_path);
  image->initramfs_path = g_steal_pointer (&path);
  g_free (image->initramfs_sha256);
  image->initramfs_sha256 = g_steal_pointer (&sha256);
  return TRUE;
}

/* The testroot variant: the test programs of tests/guest and testroot.ini's
 * files at /airlock/testroot. */
static gboolean
ensure_testroot (AirlockGuestInputs *in, AirlockGuestImage *image,
                 const AirlockGuestImageOptions *options, GError **error)
{
  g_autofree char *recipe = g_build_filename (airlock_data_dir (), "testroot.ini", NULL);
  g_autoptr (AirlockTestroot) testroot = NULL;
  g_autofree char *key = NULL;

  if (!airlock_guest_check_data_file (recipe, "testroot recipe", error))
    return FALSE;
  testroot = airlock_testroot_load (in->arch, airlock_guest_programs_dir (), recipe, error);
  if (!testroot)
    return FALSE;
  key = airlock_testroot_key (testroot, image->initramfs_sha256);
  return ensure_variant (in, image, options, &testroot_variant, testroot, key, error);
}

/* The static-shell variant (shell.ini's pinned busybox), on whatever
 * initramfs @image has by now (the base's, or the testroot's). */
static gboolean
ensure_shell (AirlockGuestInputs *in, AirlockGuestImage *image,
              const AirlockGuestImageOptions *options, GError **error)
{
  g_autofree char *recipe = g_build_filename (airlock_data_dir (), "shell.ini", NULL);
  g_autoptr (AirlockShellTools) tools = NULL;
  g_autofree char *key = NULL;

  if (!airlock_guest_check_data_file (recipe, "shell recipe", error))
    return FALSE;
  tools = airlock_shell_tools_load (in->arch, recipe, error);
  if (!tools)
    return FALSE;
  key = airlock_shell_tools_key (tools, image->initramfs_sha256);
  return ensure_variant (in, image, options, &shell_variant, tools, key, error);
}

AirlockGuestImage *
airlock_guest_image_ensure (AirlockArch arch, const AirlockGuestImageOptions *options,
                            GError **error)
{
  static const AirlockGuestImageOptions defaults = { NULL };
  g_autoptr (AirlockGuestInputs) in = NULL;
  g_autoptr (AirlockGuestImage) image = NULL;

  g_return_val_if_fail ((unsigned) arch < AIRLOCK_N_ARCHES, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!options)
    options = &defaults;
  image = ensure_base_image (arch, options, &in, error);
  if (!image)
    return NULL;
  if (options->with_testroot && !ensure_testroot (in, image, options, error))
    return NULL;
  if (options->with_shell && !ensure_shell (in, image, options, error))
    return NULL;
  return g_steal_pointer (&image);
}
