/* The image's rootfs as an ext4 disk, built with one libguestfs handle and
 * cached by manifest digest.
 *
 * Build: pass 1 reads every layer on the host (digest verified, entries
 * checked, whiteouts resolved: layer.c), which also sizes the disk; then
 * the appliance starts once, makes the file system, and each layer gets
 * its removals (rm -rf) and then its entries as a plain tar streamed through
 * a pipe into tar-in.  Image content only ever exists in the pipe and in
 * the disk file.
 *
 * Cache: <cache>/image/<manifest hex>-<builder version>/rootfs.ext4 and
 * disk.json (size and SHA-256 of the disk, and the file's identity when it
 * was last hashed; written last).  A flock on .lock in that directory
 * serialises builders and checkers; a build goes to a temporary name in the
 * same directory and is renamed into place.
 *
 * A cached run re-hashes the disk only when the file's identity (device,
 * inode, size, modification time to the nanosecond) differs from the one
 * recorded: a write to the file, a copy or a replacement moves its
 * modification time or inode, so the check costs a stat whatever the
 * image's size (issue 8: a cached re-run under 0.3 s) instead of a pass
 * over every byte (0.7 s per GB at SHA-256's speed here).  The hash guards
 * against accidents (a torn build, a stray write), not against someone who
 * can write the cache: they could rewrite disk.json as well.  Not the
 * change time: libvirt's security drivers relabel the disk at each start.
 * A disk whose identity moved but whose bytes still match (a restored
 * cache) gets its new identity recorded.
 *
 * libguestfs is loaded with dlopen() the first time a disk is built, not
 * linked: its constructor calls virInitialize(), which would read libvirt's
 * logging environment before airlock sets it (every command would then
 * print libvirt's log lines), and commands that build no disk never need
 * it.  Only the header is used at build time. */
#define _GNU_SOURCE

#include "config.h"

#include "image/disk-private.h"
#include "image/printable-private.h"
#include "cache-dir-private.h"
#include "libvirt-env-private.h"
#include "json-util-private.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <guestfs.h>
#include <json-glib/json-glib.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define DISK_FILE "rootfs.ext4"
#define META_FILE "disk.json"

/* Free space left in the file system beyond the estimate of what the
 * layers need: ext4's own metadata and whatever the estimate misses.  The
 * file is sparse, so headroom costs no host disk, only checksum time. */
#define HEADROOM_MIN (16u << 20)
#define DISK_MIN (32u << 20)
#define DISK_ALIGN (4u << 20)

static void
report (const AirlockImageDiskOptions *options, const char *stage, guint64 done, guint64 total)
{
  if (options->progress)
    options->progress (stage, done, total, options->progress_data);
}

static gboolean
set_io_error (GError **error, int errsv, const char *action, const char *path)
{
  const AirlockCacheDir errors = { .error_domain = AIRLOCK_IMAGE_ERROR,
                                   .error_code = AIRLOCK_IMAGE_ERROR_DISK };

  return airlock_cache_set_io_error (&errors, error, errsv, action, path);
}

/* The hex part of "sha256:<64 hex>", or NULL: it becomes a directory name,
 * so nothing else is accepted. */
static const char *
manifest_hex (const char *digest)
{
  const char *hex;
  int i;

  if (!digest || !g_str_has_prefix (digest, "sha256:"))
    return NULL;
  hex = digest + strlen ("sha256:");
  for (i = 0; i < 64; i++)
    if (!g_ascii_isxdigit (hex[i]) || g_ascii_isupper (hex[i]))
      return NULL;
  return hex[64] == '\0' ? hex : NULL;
}

char *
airlock_image_disk_sha256 (const char *path, GError **error)
{
  g_autofree guint8 *buf = g_malloc (1 << 20);
  EVP_MD_CTX *ctx = NULL;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  char *hex = NULL;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  unsigned int i;

  if (fd < 0)
    {
      set_io_error (error, errno, "read", path);
      return NULL;
    }
  ctx = EVP_MD_CTX_new ();
  if (!ctx || !EVP_DigestInit_ex (ctx, EVP_sha256 (), NULL))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DISK,
                   "cannot checksum '%s': libcrypto has no SHA-256", path);
      goto out;
    }
  for (;;)
    {
      ssize_t n = read (fd, buf, 1 << 20);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          set_io_error (error, errno, "read", path);
          goto out;
        }
      if (n == 0)
        break;
      EVP_DigestUpdate (ctx, buf, n);
    }
  EVP_DigestFinal_ex (ctx, md, &md_len);
  hex = g_malloc (md_len * 2 + 1);
  for (i = 0; i < md_len; i++)
    sprintf (hex + 2 * i, "%02x", md[i]);

out:
  EVP_MD_CTX_free (ctx);
  close (fd);
  return hex;
}

/* ---- cache ---- */

typedef struct {
  char *dir;
  char *disk;
  char *meta;
} DiskPaths;

static void
disk_paths_clear (DiskPaths *p)
{
  g_free (p->dir);
  g_free (p->disk);
  g_free (p->meta);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (DiskPaths, disk_paths_clear)

/* Serialises everyone who checks or builds this disk.  Returns the locked
 * fd (closing it unlocks), or -1 with @error set. */
static int
lock_disk (const AirlockCacheDir *cd, const AirlockImage *image, GError **error)
{
  g_autofree char *stage = g_strdup_printf (
      "wait for another airlock building the disk of image '%s' (%s)", image->reference,
      airlock_arch_to_string (image->arch));

  return airlock_cache_lock (cd, stage, error);
}

/* The identity of the disk file as disk.json records it.  The ctime is
 * in it because no system call sets it: utimensat() puts back an mtime,
 * but any write, chown or chmod moves the ctime to the present (only
 * setting the clock could aim it).  That matters
 * where someone else may write the file: under qemu:///system libvirt
 * hands a disk to the QEMU user and does not take back a read-only one. */
static char *
disk_identity (const struct stat *st)
{
  return g_strdup_printf ("dev %" G_GUINT64_FORMAT " ino %" G_GUINT64_FORMAT " size %" G_GINT64_FORMAT
                          " mtime %" G_GINT64_FORMAT ".%09ld ctime %" G_GINT64_FORMAT ".%09ld",
                          (guint64) st->st_dev, (guint64) st->st_ino, (gint64) st->st_size,
                          (gint64) st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
                          (gint64) st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

static gboolean write_meta (const DiskPaths *paths, const AirlockImage *image, const char *sha256,
                            const struct stat *hashed, GError **error);

/* Whether the cached disk is whole.  FALSE with @ret_why NULL: there is
 * none; with a reason: there is one and it is damaged or stale. */
static gboolean
check_cached (const DiskPaths *paths, const AirlockImage *image, char **ret_why)
{
  g_autoptr (JsonNode) parsed = NULL;
  g_autoptr (GError) local_error = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *identity = NULL;
  JsonObject *o;
  const char *recorded_sha256;
  gint64 builder_version = 0, size = -1;
  struct stat st;
  gboolean have_disk = g_stat (paths->disk, &st) == 0;
  gboolean have_meta = g_file_test (paths->meta, G_FILE_TEST_EXISTS);

  *ret_why = NULL;
  if (!have_disk && !have_meta)
    return FALSE;
  if (!have_disk)
    {
      *ret_why = g_strdup ("the disk file is missing");
      return FALSE;
    }
  if (!have_meta)
    {
      /* A build that died between the rename and the record. */
      *ret_why = g_strdup_printf ("'%s' is missing", META_FILE);
      return FALSE;
    }
  parsed = airlock_cache_manifest_read (paths->meta, NULL, &local_error);
  if (!parsed)
    {
      *ret_why = g_strdup_printf ("'%s' does not parse", paths->meta);
      return FALSE;
    }
  o = json_node_get_object (parsed);
  /* A member of the wrong type reads as absent: the record describes
   * another disk, or one of unknown size, identity or SHA-256. */
  (void) airlock_json_get_int (o, "builder_version", &builder_version);
  (void) airlock_json_get_int (o, "size", &size);
  recorded_sha256 = airlock_json_get_string (o, "sha256");
  if (builder_version != AIRLOCK_IMAGE_DISK_BUILDER_VERSION
      || g_strcmp0 (airlock_json_get_string (o, "manifest_digest"), image->manifest_digest) != 0)
    {
      *ret_why = g_strdup_printf ("'%s' describes another disk", paths->meta);
      return FALSE;
    }
  if ((guint64) st.st_size != (guint64) size)
    {
      *ret_why = g_strdup_printf ("its size is %" G_GUINT64_FORMAT " bytes, not %" G_GINT64_FORMAT,
                                  (guint64) st.st_size, size);
      return FALSE;
    }
  identity = disk_identity (&st);
  if (g_strcmp0 (identity, airlock_json_get_string (o, "identity")) == 0)
    return TRUE;
  sha256 = airlock_image_disk_sha256 (paths->disk, &local_error);
  if (!sha256)
    {
      *ret_why = g_strdup (local_error->message);
      return FALSE;
    }
  if (g_strcmp0 (sha256, recorded_sha256) != 0)
    {
      *ret_why = g_strdup_printf ("its SHA-256 is %s, not the %s recorded when it was built",
                                  sha256, recorded_sha256 ? recorded_sha256 : "?");
      return FALSE;
    }
  /* Whole, under a new identity: record it, so the next run need not hash
   * again.  Failing to is only slower. */
  (void) write_meta (paths, image, sha256, &st, NULL);
  return TRUE;
}

/* Records the disk.  @hashed is what stat() said of the disk before its
 * SHA-256 was taken: its size is the one recorded, and its identity is
 * recorded only when the file still has it, so a write during the hash
 * leaves no identity, and the next use hashes again. */
static gboolean
write_meta (const DiskPaths *paths, const AirlockImage *image, const char *sha256,
            const struct stat *hashed, GError **error)
{
  struct stat st;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  guint i;

  json_builder_begin_object (b);
  airlock_json_set_int (b, "builder_version", AIRLOCK_IMAGE_DISK_BUILDER_VERSION);
  airlock_json_set_str (b, "reference", image->reference);
  airlock_json_set_str (b, "arch", airlock_arch_to_string (image->arch));
  airlock_json_set_str (b, "manifest_digest", image->manifest_digest);
  airlock_json_set_str (b, "config_digest", image->config_digest);
  json_builder_set_member_name (b, "layers");
  json_builder_begin_array (b);
  for (i = 0; i < image->layers->len; i++)
    airlock_json_set_str (b, NULL, ((AirlockImageLayer *) image->layers->pdata[i])->digest);
  json_builder_end_array (b);
  airlock_json_set_str (b, "file", DISK_FILE);
  airlock_json_set_int (b, "size", hashed->st_size);
  airlock_json_set_str (b, "sha256", sha256);
  /* The identity its SHA-256 vouches for. */
  if (g_stat (paths->disk, &st) == 0)
    {
      g_autofree char *identity = disk_identity (&st);
      g_autofree char *vouched = disk_identity (hashed);

      if (g_str_equal (identity, vouched))
        airlock_json_set_str (b, "identity", identity);
    }
  json_builder_end_object (b);

  if (!airlock_cache_manifest_write (b, paths->meta,
                                     G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE,
                                     error))
    {
      g_prefix_error (error, "cannot record the disk of image '%s': ", image->reference);
      return FALSE;
    }
  return TRUE;
}

/* ---- libguestfs ---- */

/* The host's boot time (seconds since the epoch), or 0. */
static gint64
host_boot_time (void)
{
  g_autofree char *stat_text = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/stat", &stat_text, NULL, NULL))
    return 0;
  line = strstr (stat_text, "\nbtime ");
  return line ? g_ascii_strtoll (line + strlen ("\nbtime "), NULL, 10) : 0;
}

/* Whether KVM has been proven to work on this host boot: the VM layer's
 * probe (lib/vm/accel.c) boots a guest under KVM and records the result
 * in <cache>/accel/<arch>.  A /dev/kvm that opens is not enough (here it
 * aborts QEMU with "failed to set MSR"), and probing it ourselves would
 * cost a whole appliance launch; so without a fresh positive probe the
 * appliance runs under TCG. */
static gboolean
kvm_proven (const char *cache_dir)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = NULL;
  AirlockArch host;
  struct stat st;
  int fd;

  if (!airlock_arch_host (&host))
    return FALSE;
  path = g_build_filename (cache_dir, "accel", airlock_arch_to_string (host), NULL);
  if (g_stat (path, &st) < 0 || st.st_mtime < host_boot_time ()
      || !g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL)
      || !g_key_file_get_boolean (kf, "kvm", "usable", NULL))
    return FALSE;
  fd = open ("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return FALSE;
  close (fd);
  return TRUE;
}

#define GUESTFS_SONAME "libguestfs.so.0"

/* The libguestfs functions disk.c calls, resolved from the library loaded
 * at run time.  The types come from <guestfs.h>, so a mismatch is a
 * compile error. */
typedef struct {
  __typeof__ (&guestfs_create) create;
  __typeof__ (&guestfs_close) close;
  __typeof__ (&guestfs_last_error) last_error;
  __typeof__ (&guestfs_set_error_handler) set_error_handler;
  __typeof__ (&guestfs_set_backend) set_backend;
  __typeof__ (&guestfs_set_backend_settings) set_backend_settings;
  __typeof__ (&guestfs_add_drive_opts_argv) add_drive_opts_argv;
  __typeof__ (&guestfs_launch) launch;
  __typeof__ (&guestfs_mke2fs_argv) mke2fs_argv;
  __typeof__ (&guestfs_mount) mount;
  __typeof__ (&guestfs_rmdir) rmdir;
  __typeof__ (&guestfs_rm_rf) rm_rf;
  __typeof__ (&guestfs_tar_in_opts_argv) tar_in_opts_argv;
  __typeof__ (&guestfs_umount_all) umount_all;
  __typeof__ (&guestfs_shutdown) shutdown;
} GuestfsApi;

static GuestfsApi gfs;

typedef struct {
  char *error;       /* NULL once loaded */
} GuestfsLoad;

static gpointer
load_guestfs_once (gpointer data)
{
  const char *cache_dir = data;
  static const struct {
    const char *name;
    gsize offset;
  } symbols[] = {
#define SYM(n) { "guestfs_" #n, G_STRUCT_OFFSET (GuestfsApi, n) }
    SYM (create), SYM (close), SYM (last_error), SYM (set_error_handler),
    SYM (set_backend), SYM (set_backend_settings), SYM (add_drive_opts_argv),
    SYM (launch), SYM (mke2fs_argv), SYM (mount), SYM (rmdir), SYM (rm_rf),
    SYM (tar_in_opts_argv), SYM (umount_all), SYM (shutdown),
#undef SYM
  };
  GuestfsLoad *load = g_new0 (GuestfsLoad, 1);
  GuestfsApi api;
  void *handle;
  gsize i;

  /* libguestfs' constructor initialises libvirt: its log goes where
   * connection.c would send it, not to stderr. */
  airlock_libvirt_env_init (cache_dir);
  handle = dlopen (GUESTFS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    {
      load->error = g_strdup_printf (GUESTFS_SONAME " cannot be loaded: %s; install libguestfs0",
                                     dlerror ());
      return load;
    }
  for (i = 0; i < G_N_ELEMENTS (symbols); i++)
    {
      void *sym = dlsym (handle, symbols[i].name);

      if (!sym)
        {
          load->error = g_strdup_printf (GUESTFS_SONAME " cannot be used: %s; install libguestfs0",
                                         dlerror ());
          /* Kept loaded: its constructor has run, and unloading it buys nothing. */
          return load;
        }
      G_STRUCT_MEMBER (void *, &api, symbols[i].offset) = sym;
    }
  gfs = api;
  return load;
}

/* Loads libguestfs once per process (after pointing libvirt's log into
 * @cache_dir).  FALSE with @error naming the library if it cannot be
 * loaded; every later call gives the same answer. */
static gboolean
load_guestfs (const char *cache_dir, const AirlockImage *image, GError **error)
{
  static GOnce once = G_ONCE_INIT;
  const GuestfsLoad *load = g_once (&once, load_guestfs_once, (gpointer) cache_dir);

  if (load->error)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DISK,
                   "cannot build the disk of image '%s': %s", image->reference, load->error);
      return FALSE;
    }
  return TRUE;
}

static void
guestfs_handle_close (guestfs_h *g)
{
  gfs.close (g);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (guestfs_h, guestfs_handle_close)

static gboolean
set_guestfs_error (GError **error, guestfs_h *g, const char *action, const AirlockImage *image)
{
  const char *msg = gfs.last_error (g);
  /* The appliance's message can quote the image's paths (a whited-out
   * path rm -rf failed on). */
  g_autofree char *shown = airlock_image_printable (msg ? msg : "unknown libguestfs error");

  g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DISK,
               "cannot build the disk of image '%s': %s: %s", image->reference, action, shown);
  return FALSE;
}

/* A fixed file system UUID from the manifest digest, so two builds of one
 * image name their file system alike. */
static char *
uuid_from_digest (const char *hex)
{
  char h[33];

  memcpy (h, hex, 32);
  h[32] = '\0';
  h[12] = '5';                                  /* name-based */
  h[16] = "89ab"[g_ascii_xdigit_value (h[16]) & 3];  /* RFC 4122 variant */
  return g_strdup_printf ("%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

typedef struct {
  guestfs_h *g;
  int fd;            /* the pipe's read end: closed by the thread */
  char *error;
} TarJob;

static gpointer
tar_in_thread (gpointer data)
{
  TarJob *job = data;
  g_autofree char *path = g_strdup_printf ("/dev/fd/%d", job->fd);
  const struct guestfs_tar_in_opts_argv tar_opts = {
    .bitmask = GUESTFS_TAR_IN_OPTS_XATTRS_BITMASK,
    .xattrs = 1,
  };

  /* Error handlers are per thread: this one must not print either. */
  gfs.set_error_handler (job->g, NULL, NULL);
  /* libguestfs opens the path itself and uploads what it reads. */
  if (gfs.tar_in_opts_argv (job->g, path, "/", &tar_opts) < 0)
    {
      const char *msg = gfs.last_error (job->g);
      job->error = g_strdup (msg ? msg : "unknown libguestfs error");
    }
  /* A writer still writing now gets EPIPE instead of blocking forever. */
  close (job->fd);
  return NULL;
}

gboolean
airlock_image_parse_size (const char *text, guint64 *ret_bytes, GError **error)
{
  static const char units[] = "KMGT";
  guint64 value;
  char *end = NULL;
  const char *unit;
  guint shift = 0;

  if (text && g_ascii_isdigit (*text))
    {
      errno = 0;
      value = g_ascii_strtoull (text, &end, 10);
      if (errno == 0 && value > 0)
        {
          if (*end && (unit = strchr (units, g_ascii_toupper (*end))))
            {
              shift = 10 * (guint) (unit - units + 1);
              end++;
              if (end[0] == 'i' && end[1] == 'B')
                end += 2;
              else if (end[0] == 'B')
                end++;
            }
          if (!*end && value <= (G_MAXUINT64 >> shift))
            {
              *ret_bytes = value << shift;
              return TRUE;
            }
        }
    }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "'%s' is not a size: give bytes, or a number with K, M, G or T (e.g. '8G')",
               text ? text : "");
  return FALSE;
}

/* The bound for this build: the caller's, else the environment's, else
 * the default. */
static gboolean
image_size_bound (const AirlockImageDiskOptions *options, guint64 *ret_bytes, GError **error)
{
  const char *env = g_getenv ("AIRLOCK_MAX_IMAGE_SIZE");
  g_autoptr (GError) local = NULL;

  if (options->max_image_bytes)
    *ret_bytes = options->max_image_bytes;
  else if (env && *env)
    {
      /* Not an image error: the environment is wrong (exit 4, not 17). */
      if (!airlock_image_parse_size (env, ret_bytes, &local))
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local), "AIRLOCK_MAX_IMAGE_SIZE: ");
          return FALSE;
        }
    }
  else
    *ret_bytes = AIRLOCK_IMAGE_DEFAULT_MAX_BYTES;
  return TRUE;
}

typedef struct {
  const AirlockImageDiskOptions *options;
  const char *stage;
  guint64 total;
} LayerProgress;

static void
layer_progress (guint64 tar_bytes, gpointer user_data)
{
  LayerProgress *lp = user_data;

  report (lp->options, lp->stage, MIN (tar_bytes, lp->total), lp->total);
}

/* Streams layer @index (pass 2) into the mounted file system. */
static gboolean
extract_layer (guestfs_h *g, const AirlockImage *image, guint index, AirlockLayerPlan *plan,
               AirlockLayerOpenFunc open_layer, gpointer open_data,
               const AirlockImageDiskOptions *options, GError **error)
{
  const AirlockImageLayer *layer = image->layers->pdata[index];
  g_autofree char *what = g_strdup_printf ("image '%s' layer %s", image->reference, layer->digest);
  g_autofree char *stage = NULL;
  g_autoptr (GInputStream) stream = NULL;
  g_autoptr (GError) copy_error = NULL;
  GPtrArray *removals = airlock_layer_plan_get_removals (plan);
  TarJob job = { .g = g };
  LayerProgress lp = { .options = options };
  GThread *thread;
  gboolean copied;
  int fds[2];
  guint i;

  for (i = 0; i < removals->len; i++)
    {
      g_autofree char *path = g_strconcat ("/", (char *) removals->pdata[i], NULL);

      if (gfs.rm_rf (g, path) < 0)
        return set_guestfs_error (error, g, "remove a whited-out path", image);
    }

  stream = open_layer (layer, index, open_data, error);
  if (!stream)
    return FALSE;
  if (pipe2 (fds, O_CLOEXEC) < 0)
    return set_io_error (error, errno, "create a pipe for", what);
  /* Fewer wake-ups between us and libguestfs' reader. */
  (void) fcntl (fds[1], F_SETPIPE_SZ, 1 << 20);

  stage = g_strdup_printf ("layer %u/%u: %.1f MB", index + 1, image->layers->len,
                           airlock_layer_plan_get_tar_bytes (plan) / 1e6);
  lp.stage = stage;
  lp.total = airlock_layer_plan_get_tar_bytes (plan);
  report (options, stage, 0, lp.total);

  job.fd = fds[0];
  thread = g_thread_new ("airlock-tar-in", tar_in_thread, &job);
  copied = airlock_layer_copy (stream, plan, fds[1], what, layer_progress, &lp, &copy_error);
  close (fds[1]);
  g_thread_join (thread);

  if (!copied && !(job.error && g_error_matches (copy_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE)))
    {
      g_free (job.error);
      g_propagate_error (error, g_steal_pointer (&copy_error));
      return FALSE;
    }
  if (job.error)
    {
      /* tar's complaints in the appliance name the layer's entries. */
      g_autofree char *shown = airlock_image_printable (job.error);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DISK,
                   "cannot extract %s into the disk: %s", what, shown);
      g_free (job.error);
      return FALSE;
    }
  return TRUE;
}

/* Builds the disk into @path (an empty file): pass 1 over all layers,
 * then one appliance. */
static gboolean
build_disk (const AirlockImage *image, const char *hex, const char *path, const char *cache_dir,
            AirlockLayerOpenFunc open_layer, gpointer open_data,
            const AirlockImageDiskOptions *options, guint64 max_image_bytes, GError **error)
{
  g_autoptr (AirlockRootfsModel) model = airlock_rootfs_model_new ();
  g_autoptr (GPtrArray) plans = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_layer_plan_free);
  g_autoptr (guestfs_h) g = NULL;
  g_autofree char *uuid = NULL;
  g_autofree char *stage = NULL;
  gboolean tcg = !kvm_proven (cache_dir);
  guint64 need = 0, entries = 0, tar_bytes = 0, size;
  guint i;

  for (i = 0; i < image->layers->len; i++)
    {
      const AirlockImageLayer *layer = image->layers->pdata[i];
      g_autofree char *what = g_strdup_printf ("image '%s' layer %s", image->reference, layer->digest);
      g_autofree char *check_stage = g_strdup_printf ("check layer %u/%u", i + 1, image->layers->len);
      g_autoptr (GInputStream) stream = NULL;
      AirlockLayerPlan *plan;

      report (options, check_stage, i, image->layers->len);
      stream = open_layer (layer, i, open_data, error);
      if (!stream)
        return FALSE;
      plan = airlock_layer_scan (stream, i, model, tar_bytes, max_image_bytes, what, error);
      if (!plan)
        return FALSE;
      tar_bytes += airlock_layer_plan_get_tar_bytes (plan);
      need += airlock_layer_plan_get_disk_bytes (plan);
      entries += airlock_layer_plan_get_entries (plan);
      g_ptr_array_add (plans, plan);
    }

  size = need + need / 4 + HEADROOM_MIN;
  size = MAX (size, DISK_MIN);
  size = (size + DISK_ALIGN - 1) / DISK_ALIGN * DISK_ALIGN;
  if (truncate (path, size) < 0)
    return set_io_error (error, errno, "size", path);

  if (!load_guestfs (cache_dir, image, error))
    return FALSE;
  g = gfs.create ();
  if (!g)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DISK,
                   "cannot build the disk of image '%s': cannot create a libguestfs handle",
                   image->reference);
      return FALSE;
    }
  /* The library never prints: errors come back through @error. */
  gfs.set_error_handler (g, NULL, NULL);
  {
    /* The direct backend needs no libvirtd; TCG unless KVM is proven. */
    char *tcg_settings[] = { (char *) "force_tcg", NULL };
    char *no_settings[] = { NULL };

    if (gfs.set_backend (g, "direct") < 0
        || gfs.set_backend_settings (g, tcg ? tcg_settings : no_settings) < 0)
      return set_guestfs_error (error, g, "configure libguestfs", image);
  }
  /* cachemode=unsafe: QEMU skips flushes; the file is fsynced once it is
   * complete, and a build that dies is thrown away anyway. */
  if (gfs.add_drive_opts_argv (g, path,
                               &(const struct guestfs_add_drive_opts_argv) {
                                 .bitmask = GUESTFS_ADD_DRIVE_OPTS_FORMAT_BITMASK
                                            | GUESTFS_ADD_DRIVE_OPTS_CACHEMODE_BITMASK,
                                 .format = "raw",
                                 .cachemode = "unsafe",
                               }) < 0)
    return set_guestfs_error (error, g, "add the disk", image);

  stage = g_strdup_printf ("start the libguestfs appliance (%s)", tcg ? "TCG" : "KVM");
  report (options, stage, 0, 0);
  if (gfs.launch (g) < 0)
    return set_guestfs_error (error, g, "start the libguestfs appliance", image);

  /* No journal: the disk is written once, here, and attached read-only;
   * a build that dies is discarded, so there is nothing to replay, and
   * the journal would cost space and writes.  metadata_csum stays (the
   * mke2fs default): the guest kernel verifies every metadata block it
   * reads, which catches a damaged disk at mount or lookup. */
  uuid = uuid_from_digest (hex);
  if (gfs.mke2fs_argv (g, "/dev/sda",
                       &(const struct guestfs_mke2fs_argv) {
                         .bitmask = GUESTFS_MKE2FS_FSTYPE_BITMASK
                                    | GUESTFS_MKE2FS_BLOCKSIZE_BITMASK
                                    | GUESTFS_MKE2FS_INODESIZE_BITMASK
                                    | GUESTFS_MKE2FS_NUMBEROFINODES_BITMASK
                                    | GUESTFS_MKE2FS_RESERVEDBLOCKSPERCENTAGE_BITMASK
                                    | GUESTFS_MKE2FS_HASJOURNAL_BITMASK
                                    | GUESTFS_MKE2FS_LABEL_BITMASK
                                    | GUESTFS_MKE2FS_UUID_BITMASK
                                    | GUESTFS_MKE2FS_DISCARD_BITMASK,
                         .fstype = "ext4",
                         .blocksize = 4096,
                         .inodesize = 256,
                         .numberofinodes = (int64_t) (entries + 1024),
                         .reservedblockspercentage = 0,
                         .hasjournal = 0,
                         .label = "airlock-rootfs",
                         .uuid = uuid,
                         .discard = 0,
                       }) < 0)
    return set_guestfs_error (error, g, "make the file system", image);
  if (gfs.mount (g, "/dev/sda", "/") < 0)
    return set_guestfs_error (error, g, "mount the file system", image);
  /* Not part of the image. */
  if (gfs.rmdir (g, "/lost+found") < 0)
    return set_guestfs_error (error, g, "remove lost+found", image);

  for (i = 0; i < image->layers->len; i++)
    if (!extract_layer (g, image, i, plans->pdata[i], open_layer, open_data, options, error))
      return FALSE;

  report (options, "finish the disk", 0, 0);
  if (gfs.umount_all (g) < 0 || gfs.shutdown (g) < 0)
    return set_guestfs_error (error, g, "finish the disk", image);
  return TRUE;
}

char *
airlock_image_disk_ensure_with (const AirlockImage *image, AirlockLayerOpenFunc open_layer,
                                gpointer open_data, const AirlockImageDiskOptions *options,
                                gboolean *ret_built, GError **error)
{
  static const AirlockImageDiskOptions no_options = { 0 };
  g_auto (DiskPaths) paths = { 0 };
  AirlockCacheDir cd = { .error_domain = AIRLOCK_IMAGE_ERROR,
                         .error_code = AIRLOCK_IMAGE_ERROR_DISK };
  g_autofree char *cache_dir = NULL;
  g_autofree char *why = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *sha256 = NULL;
  g_autofree char *key = NULL;
  const char *hex;
  struct stat st;
  int lock_fd = -1, fd;
  char *ret = NULL;
  guint64 max_image_bytes;

  g_return_val_if_fail (image != NULL, NULL);
  g_return_val_if_fail (open_layer != NULL, NULL);
  if (!options)
    options = &no_options;
  cd.progress = options->progress;
  cd.progress_data = options->progress_data;
  if (!image_size_bound (options, &max_image_bytes, error))
    return NULL;

  hex = manifest_hex (image->manifest_digest);
  if (!hex)
    {
      /* A resolved image has a checked digest; this one came from
       * elsewhere, and the digest could be anything. */
      g_autofree char *shown = airlock_image_printable (image->manifest_digest);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "image '%s' has no usable manifest digest ('%s')", image->reference, shown);
      return NULL;
    }
  /* Absolute, as guestimg/inputs.c makes its own: the disk's path goes to
   * QEMU, which does not share our working directory. */
  if (options->cache_dir)
    cache_dir = g_canonicalize_filename (options->cache_dir, NULL);
  else
    cache_dir = airlock_default_cache_dir ();
  key = g_strdup_printf ("%s-%d", hex, AIRLOCK_IMAGE_DISK_BUILDER_VERSION);
  paths.dir = g_build_filename (cache_dir, "image", key, NULL);
  paths.disk = g_build_filename (paths.dir, DISK_FILE, NULL);
  paths.meta = g_build_filename (paths.dir, META_FILE, NULL);
  cd.dir = paths.dir;
  if (g_mkdir_with_parents (paths.dir, 0755) < 0)
    {
      set_io_error (error, errno, "create the cache directory", paths.dir);
      return NULL;
    }

  lock_fd = lock_disk (&cd, image, error);
  if (lock_fd < 0)
    return NULL;

  if (!options->force)
    {
      if (check_cached (&paths, image, &why))
        {
          if (ret_built)
            *ret_built = FALSE;
          ret = g_steal_pointer (&paths.disk);
          goto out;
        }
      if (why)
        {
          g_autofree char *notice = g_strdup_printf (
              "the cached disk '%s' of image '%s' is damaged (%s); rebuilding it", paths.disk,
              image->reference, why);
          report (options, notice, 0, 0);
        }
    }

  airlock_cache_remove_stale (&cd);
  tmp = airlock_cache_new_build (&cd, FALSE, "a disk", error);
  if (!tmp)
    goto out;
  if (!build_disk (image, hex, tmp, cache_dir, open_layer, open_data, options, max_image_bytes,
                   error))
    goto out_unlink;

  /* Durable before it is named, then named before it is recorded: a crash
   * leaves no disk, or a disk without a record (rebuilt), never a record
   * that vouches for a partial disk.  Hashed under its final name: a
   * rename moves the file's ctime, which its identity holds. */
  fd = open (tmp, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fsync (fd) < 0)
    {
      set_io_error (error, errno, "write", tmp);
      if (fd >= 0)
        close (fd);
      goto out_unlink;
    }
  close (fd);
  if (g_unlink (paths.meta) < 0 && errno != ENOENT)
    {
      set_io_error (error, errno, "remove", paths.meta);
      goto out_unlink;
    }
  if (!airlock_cache_install (&cd, tmp, paths.disk, "disk", error))
    goto out_unlink;
  if (g_stat (paths.disk, &st) < 0)
    {
      set_io_error (error, errno, "read", paths.disk);
      goto out;
    }
  report (options, "checksum the disk", 0, 0);
  sha256 = airlock_image_disk_sha256 (paths.disk, error);
  if (!sha256)
    goto out;
  if (!write_meta (&paths, image, sha256, &st, error))
    goto out;
  if (ret_built)
    *ret_built = TRUE;
  ret = g_steal_pointer (&paths.disk);
  goto out;

out_unlink:
  (void) g_unlink (tmp);
out:
  close (lock_fd);
  return ret;
}

typedef struct {
  AirlockImageSource *source;
} SourceOpener;

static GInputStream *
open_from_source (const AirlockImageLayer *layer, guint index, gpointer user_data, GError **error)
{
  SourceOpener *so = user_data;

  return airlock_image_open_layer (so->source, layer, error);
}

char *
airlock_image_disk_ensure (AirlockImageSource *source, const AirlockImage *image,
                           const AirlockImageDiskOptions *options, GError **error)
{
  SourceOpener so = { .source = source };

  g_return_val_if_fail (source != NULL, NULL);
  return airlock_image_disk_ensure_with (image, open_from_source, &so, options, NULL, error);
}
