/* bench/image: the first build of an image's rootfs disk next to a floor
 * measured in the same run, and what a cached re-run adds.
 *
 * The images are generated in memory (no container engine, no files): a
 * small one (a few files, ~1 MB) and a larger one (tens of MB in thousands
 * of files over two layers).  The floor is the least libguestfs work that
 * gives the same bytes a file system: one handle, the same sparse disk
 * size, launch, mkfs, mount, one tar_in of the same tar bytes through a
 * pipe, shutdown.  airlock's build adds reading every layer twice on the
 * host (check, then re-encode), whiteouts, sizing, fsync and the SHA-256
 * of the disk.  Floor and airlock alternate within each round.  A
 * benchmark, not a test: exit 1 only when a build fails outright. */
#define _GNU_SOURCE   /* pipe2 */

#include "config.h"

#include "airlock.h"
#include "image/disk-private.h"
#include "fsutil-private.h"
#include "summary.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <guestfs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The floor calls libguestfs itself, so this program links it (libairlock
 * loads it at run time). */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (guestfs_h, guestfs_close)

#define TARGET_RATIO 1.5
#define TARGET_CACHED_S 0.3

typedef struct {
  const char *name;
  GPtrArray *layers;       /* GBytes: plain tar */
  guint files;
  guint64 bytes;
  AirlockImage image;
} BenchImage;

static la_ssize_t
append_cb (struct archive *a, void *data, const void *buf, size_t len)
{
  g_byte_array_append (data, buf, len);
  return len;
}

/* A layer of @n_files files spread over directories, sizes drawn from
 * @rand between @min and @max bytes (incompressible). */
static GBytes *
make_layer (GRand *rand, const char *prefix, guint n_files, guint min, guint max, guint64 *bytes)
{
  GByteArray *out = g_byte_array_new ();
  struct archive *a = archive_write_new ();
  struct archive_entry *e = archive_entry_new ();
  g_autofree guint8 *data = g_malloc (max);
  guint i, j;

  archive_write_set_format_pax_restricted (a);
  archive_write_open (a, out, NULL, append_cb, NULL);
  for (i = 0; i < n_files; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/d%03u/f%05u", prefix, i / 100, i);
      guint size = min + g_rand_int_range (rand, 0, max - min + 1);

      if (i % 100 == 0)
        {
          g_autofree char *dir = g_strdup_printf ("%s/d%03u", prefix, i / 100);
          archive_entry_clear (e);
          archive_entry_set_pathname (e, dir);
          archive_entry_set_filetype (e, AE_IFDIR);
          archive_entry_set_perm (e, 0755);
          archive_write_header (a, e);
        }
      for (j = 0; j + 4 <= size; j += 4)
        *(guint32 *) (data + j) = g_rand_int (rand);
      archive_entry_clear (e);
      archive_entry_set_pathname (e, path);
      archive_entry_set_filetype (e, AE_IFREG);
      archive_entry_set_perm (e, 0644);
      archive_entry_set_size (e, size);
      archive_entry_set_mtime (e, 1600000000, 0);
      archive_write_header (a, e);
      archive_write_data (a, data, size);
      *bytes += size;
    }
  archive_entry_free (e);
  archive_write_close (a);
  archive_write_free (a);
  return g_byte_array_free_to_bytes (out);
}

static void
bench_image_init (BenchImage *b, const char *name, GRand *rand, guint layers, guint files_per_layer,
                  guint min, guint max)
{
  guint i;

  b->name = name;
  b->layers = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  b->image.reference = g_strdup_printf ("bench:%s", name);
  b->image.arch = AIRLOCK_ARCH_AMD64;
  b->image.layers = g_ptr_array_new ();
  for (i = 0; i < layers; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("usr/l%u", i);
      AirlockImageLayer *l = g_new0 (AirlockImageLayer, 1);
      GBytes *tar = make_layer (rand, prefix, files_per_layer, min, max, &b->bytes);

      l->digest = g_strconcat ("sha256:", g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, tar), NULL);
      l->size = g_bytes_get_size (tar);
      g_ptr_array_add (b->layers, tar);
      g_ptr_array_add (b->image.layers, l);
      b->files += files_per_layer;
    }
}

static GInputStream *
open_bench_layer (const AirlockImageLayer *layer, guint index, gpointer data, GError **error)
{
  BenchImage *b = data;
  return g_memory_input_stream_new_from_bytes (b->layers->pdata[index]);
}

/* ---- the floor ---- */

typedef struct {
  int fd;
  GPtrArray *layers;
} FeedJob;

static gpointer
feed_thread (gpointer data)
{
  FeedJob *job = data;
  guint i;

  /* The layers' tar bytes as one tar: each layer's end-of-archive blocks
   * would stop tar, so all but the last lose theirs (1024 zero bytes). */
  for (i = 0; i < job->layers->len; i++)
    {
      gsize len;
      const guint8 *p = g_bytes_get_data (job->layers->pdata[i], &len);

      if (i + 1 < job->layers->len)
        while (len >= 512 && memcmp (p + len - 512, (guint8[512]) { 0 }, 512) == 0)
          len -= 512;
      while (len > 0)
        {
          ssize_t n = write (job->fd, p, len);
          if (n <= 0)
            break;
          p += n;
          len -= n;
        }
    }
  close (job->fd);
  return NULL;
}

static double
floor_run (BenchImage *b, const char *dir, guint64 size, GError **error)
{
  g_autofree char *disk = g_build_filename (dir, "floor.img", NULL);
  g_autoptr (guestfs_h) g = NULL;
  char *tcg[] = { (char *) "force_tcg", NULL };
  g_autofree char *fdpath = NULL;
  FeedJob job = { .layers = b->layers };
  GThread *thread;
  gint64 t0 = g_get_monotonic_time ();
  int fds[2], fd, r;

  fd = open (disk, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate (fd, size) < 0)
    g_error ("cannot create '%s'", disk);
  close (fd);
  g = guestfs_create ();
  guestfs_set_error_handler (g, NULL, NULL);
  if (guestfs_set_backend (g, "direct") < 0 || guestfs_set_backend_settings (g, tcg) < 0
      || guestfs_add_drive_opts (g, disk, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "raw",
                                 GUESTFS_ADD_DRIVE_OPTS_CACHEMODE, "unsafe", -1) < 0
      || guestfs_launch (g) < 0
      || guestfs_mke2fs (g, "/dev/sda", GUESTFS_MKE2FS_FSTYPE, "ext4", GUESTFS_MKE2FS_BLOCKSIZE,
                         (int64_t) 4096, GUESTFS_MKE2FS_HASJOURNAL, 0, -1) < 0
      || guestfs_mount (g, "/dev/sda", "/") < 0)
    goto fail;
  if (pipe2 (fds, O_CLOEXEC) < 0)
    g_error ("pipe");
  job.fd = fds[1];
  thread = g_thread_new ("feed", feed_thread, &job);
  fdpath = g_strdup_printf ("/dev/fd/%d", fds[0]);
  r = guestfs_tar_in_opts (g, fdpath, "/", GUESTFS_TAR_IN_OPTS_XATTRS, 1, -1);
  close (fds[0]);
  g_thread_join (thread);
  if (r < 0 || guestfs_umount_all (g) < 0 || guestfs_shutdown (g) < 0)
    goto fail;
  g_unlink (disk);
  return (g_get_monotonic_time () - t0) / 1e6;

fail:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "floor: %s", guestfs_last_error (g));
  g_unlink (disk);
  return -1;
}

static int
compare_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (GArray *v)
{
  g_array_sort (v, compare_double);
  if (v->len == 0)
    return 0;
  return v->len % 2 ? g_array_index (v, double, v->len / 2)
                    : (g_array_index (v, double, v->len / 2 - 1) + g_array_index (v, double, v->len / 2)) / 2;
}

static void
print_progress (const char *stage, guint64 done, guint64 total, gpointer data)
{
  if (g_str_has_prefix (stage, "the cached disk"))
    fprintf (stderr, "bench/image: %s\n", stage);
}

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  g_autofree char *work = NULL;
  BenchImage images[2] = { 0 };
  int rounds = 1;
  int failed = 0;
  guint i;
  int round;
  GOptionEntry entries[] = {
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Measured rounds (default 1: ~4 launches per round)", "N" },
    { NULL },
  };

  ctx = g_option_context_new ("- rootfs disk builds next to a libguestfs floor");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || rounds < 1)
    {
      fprintf (stderr, "bench/image: %s\n", error ? error->message : "--rounds must be at least 1");
      return 2;
    }
  work = g_dir_make_tmp ("airlock-bench-image-XXXXXX", &error);
  g_assert_no_error (error);

  bench_image_init (&images[0], "small", rand, 1, 40, 100, 50000);
  bench_image_init (&images[1], "large", rand, 2, 2500, 1000, 16000);

  printf ("%-6s %7s %8s %8s %8s %7s %8s %10s\n", "image", "files", "MB", "floor", "airlock",
          "ratio", "cached", "disk MB");
  for (i = 0; i < G_N_ELEMENTS (images); i++)
    {
      BenchImage *b = &images[i];
      g_autoptr (GArray) floors = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr (GArray) builds = g_array_new (FALSE, FALSE, sizeof (double));
      g_autoptr (GArray) cached = g_array_new (FALSE, FALSE, sizeof (double));
      guint64 disk_size = 0;

      for (round = 0; round < rounds; round++)
        {
          g_autofree char *cache = g_strdup_printf ("%s/cache-%s-%d", work, b->name, round);
          g_autofree char *digest_text = g_strdup_printf ("%s-%d-%" G_GINT64_FORMAT, b->name, round,
                                                          g_get_real_time ());
          g_autofree char *path = NULL;
          g_autofree char *again = NULL;
          AirlockImageDiskOptions o = { .cache_dir = cache, .progress = print_progress };
          gboolean built = FALSE;
          double t_build, t_cached, t_floor;
          gint64 t0;
          GStatBuf st;

          g_free (b->image.manifest_digest);
          b->image.manifest_digest = g_strconcat (
              "sha256:", g_compute_checksum_for_string (G_CHECKSUM_SHA256, digest_text, -1), NULL);

          t0 = g_get_monotonic_time ();
          path = airlock_image_disk_ensure_with (&b->image, open_bench_layer, b, &o, &built, &error);
          t_build = (g_get_monotonic_time () - t0) / 1e6;
          if (!path)
            {
              fprintf (stderr, "bench/image: %s: %s\n", b->name, error->message);
              g_clear_error (&error);
              failed = 1;
              break;
            }
          g_stat (path, &st);
          disk_size = st.st_size;

          t0 = g_get_monotonic_time ();
          again = airlock_image_disk_ensure_with (&b->image, open_bench_layer, b, &o, &built, &error);
          t_cached = (g_get_monotonic_time () - t0) / 1e6;
          if (!again || built)
            {
              fprintf (stderr, "bench/image: %s: the cached re-run %s\n", b->name,
                       again ? "rebuilt the disk" : error->message);
              g_clear_error (&error);
              failed = 1;
              break;
            }

          t_floor = floor_run (b, work, disk_size, &error);
          if (t_floor < 0)
            {
              fprintf (stderr, "bench/image: %s: %s\n", b->name, error->message);
              g_clear_error (&error);
              failed = 1;
              break;
            }
          g_array_append_val (builds, t_build);
          g_array_append_val (cached, t_cached);
          g_array_append_val (floors, t_floor);
          airlock_rm_rf (cache);
        }
      if (builds->len)
        {
          double f = median (floors), a = median (builds), c = median (cached);
          g_autofree char *build_what = g_strdup_printf ("first disk build, %s image (%.0f MB)",
                                                         b->name, b->bytes / 1e6);
          g_autofree char *cached_what = g_strdup_printf ("cached re-run, %s image (%.0f MB disk)",
                                                          b->name, disk_size / 1e6);
          BenchSummaryRow build_row = {
            .bench = "image",
            .what = build_what,
            .value = a,
            .unit = "s",
            .floor = f,
            .floor_what = "libguestfs: launch, mkfs, one tar-in",
            .target = TARGET_RATIO,
          };
          BenchSummaryRow cached_row = {
            .bench = "image",
            .what = cached_what,
            .value = c,
            .unit = "s",
            .target = TARGET_CACHED_S,
            .target_is_value = TRUE,
          };

          printf ("%-6s %7u %8.1f %7.2fs %7.2fs %6.2fx %7.3fs %10.1f\n", b->name, b->files,
                  b->bytes / 1e6, f, a, a / f, c, disk_size / 1e6);
          bench_summary_add (&build_row);
          bench_summary_add (&cached_row);
        }
    }
  printf ("target: first build within %.1fx of the floor (launch + mkfs + one tar_in of the same "
          "bytes); cached re-run under %.1f s (size + SHA-256 of the disk)\n",
          TARGET_RATIO, TARGET_CACHED_S);
  airlock_rm_rf (work);
  return failed;
}
