/* The rootfs disk: layers built in memory here (tar via libarchive), fed
 * to the builder, and the resulting ext4 checked with debugfs (no second
 * appliance).  Each libguestfs launch costs ~12 s under TCG, so the tests
 * that launch check many properties on one disk: three launches in all.
 * Tests that fail in pass 1 (before any launch) are cheap. */
#include "config.h"

#include <airlock.h>

#include "image/disk-private.h"
#include "fsutil-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* ---- layers in memory ---------------------------------------------------- */

typedef struct {
  struct archive *a;
  GByteArray *bytes;
} TarBuilder;

static la_ssize_t
tb_write (struct archive *a, void *data, const void *buf, size_t len)
{
  g_byte_array_append (((TarBuilder *) data)->bytes, buf, len);
  return len;
}

static TarBuilder *
tb_new (void)
{
  TarBuilder *tb = g_new0 (TarBuilder, 1);

  tb->bytes = g_byte_array_new ();
  tb->a = archive_write_new ();
  archive_write_set_format_pax (tb->a);
  archive_write_set_bytes_in_last_block (tb->a, 1);
  g_assert_cmpint (archive_write_open (tb->a, tb, NULL, tb_write, NULL), ==, ARCHIVE_OK);
  return tb;
}

static void
tb_add (TarBuilder *tb, const char *path, unsigned type, unsigned mode, unsigned uid, unsigned gid,
        const char *content, const char *link, gboolean hard)
{
  struct archive_entry *e = archive_entry_new ();
  gsize len = content ? strlen (content) : 0;

  archive_entry_set_pathname (e, path);
  archive_entry_set_filetype (e, type);
  archive_entry_set_perm (e, mode);
  archive_entry_set_uid (e, uid);
  archive_entry_set_gid (e, gid);
  /* Names the appliance's /etc/passwd would map elsewhere. */
  archive_entry_set_uname (e, "daemon");
  archive_entry_set_gname (e, "daemon");
  archive_entry_set_mtime (e, 1600000000, 0);
  if (type == AE_IFREG && !hard)
    archive_entry_set_size (e, len);
  if (link && hard)
    archive_entry_set_hardlink (e, link);
  else if (link)
    archive_entry_set_symlink (e, link);
  if (type == AE_IFCHR)
    archive_entry_set_rdev (e, makedev (1, 3));
  if (g_str_has_suffix (path, "xattr"))
    archive_entry_xattr_add_entry (e, "user.airlock", "yes", 3);
  g_assert_cmpint (archive_write_header (tb->a, e), ==, ARCHIVE_OK);
  if (len && !hard)
    g_assert_cmpint (archive_write_data (tb->a, content, len), ==, (la_ssize_t) len);
  archive_entry_free (e);
}

#define DIR(tb, p) tb_add (tb, p, AE_IFDIR, 0755, 0, 0, NULL, NULL, FALSE)
#define FILE_(tb, p, c) tb_add (tb, p, AE_IFREG, 0644, 0, 0, c, NULL, FALSE)

static GBytes *
tb_finish (TarBuilder *tb)
{
  GBytes *b;

  g_assert_cmpint (archive_write_close (tb->a), ==, ARCHIVE_OK);
  archive_write_free (tb->a);
  b = g_byte_array_free_to_bytes (tb->bytes);
  g_free (tb);
  return b;
}

/* A memory stream that fails at its end, as a layer stream does when its
 * bytes do not match the digest. */
typedef struct {
  GInputStream parent;
  GBytes *bytes;
  gsize pos;
} BadStream;
typedef GInputStreamClass BadStreamClass;
static GType bad_stream_get_type (void);
G_DEFINE_TYPE (BadStream, bad_stream, G_TYPE_INPUT_STREAM)

static gssize
bad_stream_read (GInputStream *stream, void *buf, gsize count, GCancellable *c, GError **error)
{
  BadStream *s = (BadStream *) stream;
  gsize size = g_bytes_get_size (s->bytes);
  gsize n = MIN (count, size - s->pos);

  if (n == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "blob sha256:bad does not match its digest");
      return -1;
    }
  memcpy (buf, (const guint8 *) g_bytes_get_data (s->bytes, NULL) + s->pos, n);
  s->pos += n;
  return n;
}

static void
bad_stream_finalize (GObject *o)
{
  g_bytes_unref (((BadStream *) o)->bytes);
  G_OBJECT_CLASS (bad_stream_parent_class)->finalize (o);
}

static void
bad_stream_class_init (BadStreamClass *klass)
{
  klass->read_fn = bad_stream_read;
  G_OBJECT_CLASS (klass)->finalize = bad_stream_finalize;
}

static void
bad_stream_init (BadStream *s)
{
}

typedef struct {
  AirlockImage *image;
  GPtrArray *blobs;      /* GBytes per layer */
  int bad_layer;         /* -1: none */
  int bad_from_open;     /* the layer's open number (1-based) from which it goes bad */
  int opens[16];
} TestImage;

static GInputStream *
test_open (const AirlockImageLayer *layer, guint index, gpointer data, GError **error)
{
  TestImage *t = data;
  GBytes *b = t->blobs->pdata[index];

  t->opens[index]++;
  if ((int) index == t->bad_layer && t->opens[index] >= t->bad_from_open)
    {
      BadStream *s = g_object_new (bad_stream_get_type (), NULL);
      s->bytes = g_bytes_ref (b);
      return G_INPUT_STREAM (s);
    }
  return g_memory_input_stream_new_from_bytes (b);
}

static void
layer_free (AirlockImageLayer *l)
{
  g_free (l->digest);
  g_free (l->media_type);
  g_free (l);
}

/* An image of @blobs (taken), its manifest digest derived from @name so
 * each test has its own cache entry. */
static TestImage *
test_image_new (const char *name, GPtrArray *blobs)
{
  TestImage *t = g_new0 (TestImage, 1);
  guint i;

  t->blobs = blobs;
  t->bad_layer = -1;
  t->image = g_new0 (AirlockImage, 1);
  t->image->reference = g_strdup_printf ("oci:test/%s", name);
  t->image->arch = AIRLOCK_ARCH_AMD64;
  {
    g_autofree char *hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, name, -1);

    t->image->manifest_digest = g_strconcat ("sha256:", hex, NULL);
  }
  t->image->config_digest = g_strdup (t->image->manifest_digest);
  t->image->layers = g_ptr_array_new_with_free_func ((GDestroyNotify) layer_free);
  for (i = 0; i < blobs->len; i++)
    {
      AirlockImageLayer *l = g_new0 (AirlockImageLayer, 1);
      g_autofree char *hex = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, blobs->pdata[i]);

      l->digest = g_strconcat ("sha256:", hex, NULL);
      l->size = g_bytes_get_size (blobs->pdata[i]);
      l->media_type = g_strdup ("application/vnd.oci.image.layer.v1.tar");
      g_ptr_array_add (t->image->layers, l);
    }
  return t;
}

static void
test_image_free (TestImage *t)
{
  g_ptr_array_unref (t->blobs);
  g_ptr_array_unref (t->image->layers);
  g_free (t->image->reference);
  g_free (t->image->manifest_digest);
  g_free (t->image->config_digest);
  g_free (t->image);
  g_free (t);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestImage, test_image_free)

/* ---- progress ----------------------------------------------------------- */

static GMutex progress_lock;
static GString *progress_log;

static void
record_progress (const char *stage, guint64 done, guint64 total, gpointer data)
{
  g_mutex_lock (&progress_lock);
  g_string_append_printf (progress_log, "%s\n", stage);
  g_mutex_unlock (&progress_lock);
}

static char *cache_dir;

static AirlockImageDiskOptions
test_options (void)
{
  AirlockImageDiskOptions o = { .cache_dir = cache_dir, .progress = record_progress };
  return o;
}

static char *
ensure (TestImage *t, gboolean *ret_built, GError **error)
{
  AirlockImageDiskOptions o = test_options ();
  return airlock_image_disk_ensure_with (t->image, test_open, t, &o, ret_built, error);
}

/* ---- debugfs ------------------------------------------------------------ */

static char *
debugfs (const char *disk, const char *request)
{
  const char *argv[] = { "debugfs", "-R", request, disk, NULL };
  g_autofree char *err = NULL;
  char *out = NULL;
  int status;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                               &err, &status, NULL));
  return out;
}

static void
assert_contains (const char *haystack, const char *needle)
{
  if (!strstr (haystack, needle))
    g_error ("expected '%s' in:\n%s", needle, haystack);
}

static void
assert_absent (const char *disk, const char *path)
{
  g_autofree char *req = g_strdup_printf ("stat %s", path);
  g_autofree char *out = debugfs (disk, req);

  if (*out)
    g_error ("'%s' should be absent from the disk:\n%s", path, out);
}

static char *
stat_of (const char *disk, const char *path)
{
  g_autofree char *req = g_strdup_printf ("stat %s", path);
  char *out = debugfs (disk, req);

  if (!*out)
    g_error ("'%s' is missing from the disk", path);
  return out;
}

static char *
inode_of (const char *disk, const char *path)
{
  g_autofree char *out = stat_of (disk, path);
  const char *p = strstr (out, "Inode: ");
  g_assert_nonnull (p);
  return g_strndup (p + 7, strcspn (p + 7, " "));
}

static gboolean
require_tools (void)
{
  g_autofree char *debugfs_path = g_find_program_in_path ("debugfs");

  if (!debugfs_path)
    g_test_skip ("debugfs (e2fsprogs) is not installed");
  return debugfs_path != NULL;
}

/* ---- the main image: every property on one disk ------------------------- */

static TestImage *
main_image (void)
{
  GPtrArray *blobs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  TarBuilder *tb;

  /* Layer 1: the base. */
  tb = tb_new ();
  DIR (tb, "./");
  DIR (tb, "etc");
  FILE_ (tb, "etc/hostname", "base\n");
  FILE_ (tb, "etc/deleted", "to be whited out\n");
  DIR (tb, "opq");
  FILE_ (tb, "opq/lower", "lower\n");
  DIR (tb, "opq/sub");
  FILE_ (tb, "opq/sub/deep", "deep\n");
  DIR (tb, "gone");
  FILE_ (tb, "gone/inner", "x\n");
  DIR (tb, "becomes-file");
  FILE_ (tb, "becomes-file/x", "x\n");
  tb_add (tb, "owned", AE_IFREG, 04750, 1234, 5678, "owned\n", NULL, FALSE);
  tb_add (tb, "dir-owned", AE_IFDIR, 0700, 42, 43, NULL, NULL, FALSE);
  tb_add (tb, "link", AE_IFLNK, 0777, 0, 0, NULL, "etc/hostname", FALSE);
  tb_add (tb, "abs-link", AE_IFLNK, 0777, 0, 0, NULL, "/etc/hostname", FALSE);
  tb_add (tb, "hard", AE_IFREG, 0644, 0, 0, NULL, "etc/hostname", TRUE);
  tb_add (tb, "dev-null", AE_IFCHR, 0666, 0, 0, NULL, NULL, FALSE);
  tb_add (tb, "with-xattr", AE_IFREG, 0644, 0, 0, "x\n", NULL, FALSE);
  FILE_ (tb, "data", "data\n");
  tb_add (tb, "data-link", AE_IFREG, 0644, 0, 0, NULL, "data", TRUE);
  g_ptr_array_add (blobs, tb_finish (tb));

  /* Layer 2: whiteouts, an opaque directory, replacements. */
  tb = tb_new ();
  FILE_ (tb, "etc/.wh.deleted", "");
  FILE_ (tb, ".wh.gone", "");
  FILE_ (tb, ".wh.never-existed", "");
  DIR (tb, "opq");
  FILE_ (tb, "opq/.wh..wh..opq", "");
  FILE_ (tb, "opq/upper", "upper\n");
  FILE_ (tb, "becomes-file", "now a file\n");
  FILE_ (tb, "etc/hostname", "upper\n");
  g_ptr_array_add (blobs, tb_finish (tb));

  return test_image_new ("main", blobs);
}

typedef struct {
  TestImage *t;
  char *path;
  gboolean built;
  GError *error;
} EnsureJob;

static gpointer
ensure_thread (gpointer data)
{
  EnsureJob *job = data;

  job->path = ensure (job->t, &job->built, &job->error);
  return NULL;
}

static void
test_build_main (void)
{
  g_autoptr (TestImage) t = main_image ();
  g_autoptr (TestImage) t2 = main_image ();
  EnsureJob jobs[2] = { { .t = t }, { .t = t2 } };
  GThread *threads[2];
  g_autofree char *out = NULL;
  g_autofree char *ino1 = NULL;
  g_autofree char *ino2 = NULL;
  g_autofree char *again = NULL;
  g_autoptr (GError) error = NULL;
  gboolean built = TRUE;
  const char *disk;
  gint64 t0;
  int i;

  if (!require_tools ())
    return;

  /* Two callers want the same disk at once: one builds, the other waits
   * and reuses it. */
  for (i = 0; i < 2; i++)
    threads[i] = g_thread_new ("ensure", ensure_thread, &jobs[i]);
  for (i = 0; i < 2; i++)
    g_thread_join (threads[i]);
  for (i = 0; i < 2; i++)
    g_assert_no_error (jobs[i].error);
  g_assert_cmpstr (jobs[0].path, ==, jobs[1].path);
  g_assert_true (jobs[0].built != jobs[1].built);
  /* Pass 1 and pass 2 of one build, nothing from the waiter. */
  g_assert_cmpint (t->opens[0] + t2->opens[0], ==, 2);
  disk = jobs[0].path;
  assert_contains (progress_log->str, "layer 2/2: ");
  assert_contains (progress_log->str, "wait for another airlock building the disk");

  /* Whiteouts: a deleted file, a deleted directory, the lower contents of
   * an opaque directory; a whiteout of nothing is fine. */
  assert_absent (disk, "/etc/deleted");
  assert_absent (disk, "/gone");
  assert_absent (disk, "/gone/inner");
  assert_absent (disk, "/opq/lower");
  assert_absent (disk, "/opq/sub");
  assert_absent (disk, "/lost+found");
  g_free (out);
  out = debugfs (disk, "cat /opq/upper");
  g_assert_cmpstr (out, ==, "upper\n");
  g_free (out);
  out = debugfs (disk, "cat /etc/hostname");
  g_assert_cmpstr (out, ==, "upper\n");
  /* A lower directory replaced by a file. */
  g_free (out);
  out = debugfs (disk, "cat /becomes-file");
  g_assert_cmpstr (out, ==, "now a file\n");
  assert_absent (disk, "/etc/.wh.deleted");
  assert_absent (disk, "/opq/.wh..wh..opq");

  /* Ownership (numeric, not mapped through the appliance's names), modes
   * with setuid, mtimes. */
  g_free (out);
  out = stat_of (disk, "/owned");
  assert_contains (out, "Mode:  04750");
  assert_contains (out, "User:  1234");
  assert_contains (out, "Group:  5678");
  assert_contains (out, "mtime: 0x5f5e1000");
  g_free (out);
  out = stat_of (disk, "/dir-owned");
  assert_contains (out, "Type: directory");
  assert_contains (out, "Mode:  0700");
  assert_contains (out, "User:    42");
  assert_contains (out, "mtime: 0x5f5e1000");
  g_free (out);
  out = stat_of (disk, "/etc");
  assert_contains (out, "User:     0");
  /* Symlinks, relative and absolute, kept as written. */
  g_free (out);
  out = stat_of (disk, "/link");
  assert_contains (out, "Type: symlink");
  assert_contains (out, "Fast link dest: \"etc/hostname\"");
  g_free (out);
  out = stat_of (disk, "/abs-link");
  assert_contains (out, "Fast link dest: \"/etc/hostname\"");
  /* Hard links share an inode; the one whose partner a later layer
   * replaced keeps the old content, as on an overlay. */
  ino1 = inode_of (disk, "/data");
  ino2 = inode_of (disk, "/data-link");
  g_assert_cmpstr (ino1, ==, ino2);
  g_free (out);
  out = stat_of (disk, "/data");
  assert_contains (out, "Links: 2");
  g_free (out);
  out = debugfs (disk, "cat /hard");
  g_assert_cmpstr (out, ==, "base\n");
  /* Device nodes and xattrs. */
  g_free (out);
  out = stat_of (disk, "/dev-null");
  assert_contains (out, "Type: character special");
  assert_contains (out, "Device major/minor number: 01:03");
  g_free (out);
  out = stat_of (disk, "/with-xattr");
  assert_contains (out, "user.airlock (3) = \"yes\"");

  /* A second call reuses the disk, checking its size and SHA-256. */
  t0 = g_get_monotonic_time ();
  again = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_false (built);
  g_assert_cmpstr (again, ==, disk);
  g_test_message ("cached disk check: %.3f s", (g_get_monotonic_time () - t0) / 1e6);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, G_USEC_PER_SEC);

  g_free (jobs[0].path);
  g_free (jobs[1].path);
}

static void
flip_byte (const char *path, goffset at)
{
  FILE *f = fopen (path, "r+b");
  int c;

  g_assert_nonnull (f);
  g_assert_cmpint (fseeko (f, at, SEEK_SET), ==, 0);
  c = fgetc (f);
  g_assert_cmpint (fseeko (f, at, SEEK_SET), ==, 0);
  fputc (c ^ 0x01, f);
  fclose (f);
}

static GInputStream *
failing_open (const AirlockImageLayer *layer, guint index, gpointer data, GError **error)
{
  g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND, "blob %s is missing",
               layer->digest);
  return NULL;
}

/* disk.json's record of the file the hash vouches for. */
static char *
recorded_identity (const char *disk)
{
  g_autofree char *dir = g_path_get_dirname (disk);
  g_autofree char *meta = g_build_filename (dir, "disk.json", NULL);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  g_assert_true (json_parser_load_from_file (parser, meta, &error));
  g_assert_no_error (error);
  return g_strdup (json_object_get_string_member_with_default (
      json_node_get_object (json_parser_get_root (parser)), "identity", NULL));
}

static char *
identity_of (const char *path)
{
  struct stat st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return g_strdup_printf ("dev %" G_GUINT64_FORMAT " ino %" G_GUINT64_FORMAT " size %" G_GINT64_FORMAT
                          " mtime %" G_GINT64_FORMAT ".%09ld ctime %" G_GINT64_FORMAT ".%09ld",
                          (guint64) st.st_dev, (guint64) st.st_ino, (gint64) st.st_size,
                          (gint64) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                          (gint64) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* A cached run skips the hash only for the very file it hashed: the record
 * names it.  The same bytes under a new inode (a restored cache) are hashed
 * once, found whole, reused, and the new file recorded. */
static void
test_moved_cache (void)
{
  g_autoptr (TestImage) t = main_image ();
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *again = NULL;
  g_autofree char *copy = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *recorded = NULL;
  g_autofree char *bytes = NULL;
  gsize len;
  gboolean built = TRUE;

  if (!require_tools ())
    return;
  path = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_false (built);          /* built by /image/disk/build */
  before = identity_of (path);
  recorded = recorded_identity (path);
  g_assert_cmpstr (recorded, ==, before);

  copy = g_strconcat (path, ".copy", NULL);
  g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
  g_assert_true (g_file_set_contents (copy, bytes, len, NULL));
  g_assert_cmpint (g_rename (copy, path), ==, 0);
  after = identity_of (path);
  g_assert_cmpstr (after, !=, before);

  g_string_truncate (progress_log, 0);
  again = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_false (built);
  g_assert_null (strstr (progress_log->str, "damaged"));
  g_clear_pointer (&recorded, g_free);
  recorded = recorded_identity (path);
  g_assert_cmpstr (recorded, ==, after);
}

/* A write in place whose writer then puts the mtime back (utimensat, as
 * `touch -r` does) keeps the inode, the size and the mtime: whoever may
 * write the file — under qemu:///system, the QEMU user libvirt gave it to —
 * must not make a cached run skip the hash.  The ctime gives it away. */
static void
test_rewritten_in_place (void)
{
  g_autoptr (TestImage) t = main_image ();
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *again = NULL;
  g_autofree char *upper = NULL;
  gboolean built = TRUE;
  struct stat before, after;

  if (!require_tools ())
    return;
  path = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_stat (path, &before), ==, 0);

  /* the ctime has a clock tick to move by */
  g_usleep (20 * 1000);
  flip_byte (path, before.st_size / 2);
  {
    struct timespec times[2] = { before.st_atim, before.st_mtim };

    g_assert_cmpint (utimensat (AT_FDCWD, path, times, 0), ==, 0);
  }
  g_assert_cmpint (g_stat (path, &after), ==, 0);
  g_assert_cmpuint (after.st_ino, ==, before.st_ino);
  g_assert_cmpint (after.st_size, ==, before.st_size);
  g_assert_cmpint (after.st_mtim.tv_sec, ==, before.st_mtim.tv_sec);
  g_assert_cmpint (after.st_mtim.tv_nsec, ==, before.st_mtim.tv_nsec);

  g_string_truncate (progress_log, 0);
  again = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_true (built);
  assert_contains (progress_log->str, "is damaged (its SHA-256 is");
  upper = debugfs (again, "cat /opq/upper");
  g_assert_cmpstr (upper, ==, "upper\n");
}

/* A damaged cached disk is noticed and rebuilt; a truncated one too. */
static void
test_damaged_cache (void)
{
  g_autoptr (TestImage) t = main_image ();
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree char *path2 = NULL;
  AirlockImageDiskOptions o = test_options ();
  gboolean built = FALSE;
  struct stat st;

  if (!require_tools ())
    return;
  path = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_false (built);          /* built by /image/disk/build */
  g_assert_cmpint (g_stat (path, &st), ==, 0);

  flip_byte (path, st.st_size / 2);
  g_string_truncate (progress_log, 0);
  path2 = ensure (t, &built, &error);
  g_assert_no_error (error);
  g_assert_true (built);
  assert_contains (progress_log->str, "is damaged (its SHA-256 is");
  g_free (path2);
  path2 = debugfs (path, "cat /opq/upper");
  g_assert_cmpstr (path2, ==, "upper\n");

  /* Truncated: noticed before any layer is read; the rebuild here fails
   * at once (its layers are gone), which proves it was attempted. */
  g_assert_cmpint (truncate (path, st.st_size / 2), ==, 0);
  g_string_truncate (progress_log, 0);
  g_clear_pointer (&path2, g_free);
  path2 = airlock_image_disk_ensure_with (t->image, failing_open, NULL, &o, NULL, &error);
  g_assert_null (path2);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND);
  assert_contains (progress_log->str, "is damaged (its size is");
}

static gboolean
cache_holds_disk (TestImage *t)
{
  g_autofree char *dir = g_strdup_printf ("%s/image/%s-%d", cache_dir,
                                          t->image->manifest_digest + strlen ("sha256:"),
                                          AIRLOCK_IMAGE_DISK_BUILDER_VERSION);
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    if (!g_str_equal (name, ".lock"))
      return TRUE;
  return FALSE;
}

/* One bad layer on top of a good base; each fails in pass 1, before any
 * appliance starts. */
static void
check_unsafe (const char *name, void (*fill) (TarBuilder *), const char *entry_text)
{
  GPtrArray *blobs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr (TestImage) t = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;
  TarBuilder *tb = tb_new ();
  gint64 t0 = g_get_monotonic_time ();

  DIR (tb, "etc");
  tb_add (tb, "escape", AE_IFLNK, 0777, 0, 0, NULL, "/", FALSE);
  g_ptr_array_add (blobs, tb_finish (tb));
  tb = tb_new ();
  fill (tb);
  g_ptr_array_add (blobs, tb_finish (tb));
  t = test_image_new (name, blobs);

  path = ensure (t, NULL, &error);
  g_assert_null (path);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSAFE);
  assert_contains (error->message, t->image->reference);
  assert_contains (error->message, ((AirlockImageLayer *) t->image->layers->pdata[1])->digest);
  assert_contains (error->message, entry_text);
  g_assert_false (cache_holds_disk (t));
  /* Pass 1 only: no second read, no appliance. */
  g_assert_cmpint (t->opens[1], ==, 1);
  g_assert_cmpint (g_get_monotonic_time () - t0, <, 2 * G_USEC_PER_SEC);
}

static void fill_absolute (TarBuilder *tb) { FILE_ (tb, "/etc/passwd", "x"); }
static void fill_dotdot (TarBuilder *tb) { FILE_ (tb, "etc/../../x", "x"); }
static void fill_lower_symlink (TarBuilder *tb) { FILE_ (tb, "escape/etc/passwd", "x"); }
static void
fill_same_layer_symlink (TarBuilder *tb)
{
  tb_add (tb, "etc/up", AE_IFLNK, 0777, 0, 0, NULL, "../..", FALSE);
  FILE_ (tb, "etc/up/x", "x");
}
static void
fill_hardlink_escape (TarBuilder *tb)
{
  tb_add (tb, "etc/shadow", AE_IFREG, 0644, 0, 0, NULL, "../../etc/shadow", TRUE);
}
static void
fill_hardlink_via_symlink (TarBuilder *tb)
{
  tb_add (tb, "etc/h", AE_IFREG, 0644, 0, 0, NULL, "escape/etc/shadow", TRUE);
}
static void fill_whiteout_via_symlink (TarBuilder *tb) { FILE_ (tb, "escape/etc/.wh.passwd", ""); }

static void
test_unsafe (void)
{
  check_unsafe ("unsafe-absolute", fill_absolute, "'/etc/passwd' is an absolute path");
  check_unsafe ("unsafe-dotdot", fill_dotdot, "'etc/../../x' has a '..' component");
  check_unsafe ("unsafe-lower-symlink", fill_lower_symlink, "through the symlink 'escape'");
  check_unsafe ("unsafe-same-symlink", fill_same_layer_symlink, "through the symlink 'etc/up'");
  check_unsafe ("unsafe-hardlink", fill_hardlink_escape, "'../../etc/shadow' has a '..' component");
  check_unsafe ("unsafe-hardlink-symlink", fill_hardlink_via_symlink,
                "hard link target through the symlink 'escape'");
  check_unsafe ("unsafe-whiteout", fill_whiteout_via_symlink, "through the symlink 'escape'");
}

static TestImage *
small_image (const char *name)
{
  GPtrArray *blobs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  TarBuilder *tb = tb_new ();

  DIR (tb, "etc");
  FILE_ (tb, "etc/a", "a\n");
  g_ptr_array_add (blobs, tb_finish (tb));
  tb = tb_new ();
  FILE_ (tb, "etc/b", "b\n");
  g_ptr_array_add (blobs, tb_finish (tb));
  return test_image_new (name, blobs);
}

/* A layer whose bytes do not match its digest fails the build, whether
 * pass 1 sees it (no appliance) or only pass 2 (the blob changed between
 * the reads: the tar is cut short), and nothing is cached. */
static void
test_bad_digest (void)
{
  g_autoptr (TestImage) t1 = small_image ("digest-pass1");
  g_autoptr (TestImage) t2 = small_image ("digest-pass2");
  g_autoptr (GError) error = NULL;
  g_autofree char *path = NULL;

  t1->bad_layer = 1;
  t1->bad_from_open = 1;
  path = ensure (t1, NULL, &error);
  g_assert_null (path);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST);
  assert_contains (error->message, "does not match its digest");
  assert_contains (error->message, ((AirlockImageLayer *) t1->image->layers->pdata[1])->digest);
  g_assert_false (cache_holds_disk (t1));
  g_clear_error (&error);

  t2->bad_layer = 1;
  t2->bad_from_open = 2;
  path = ensure (t2, NULL, &error);
  g_assert_null (path);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST);
  g_assert_cmpint (t2->opens[1], ==, 2);
  g_assert_false (cache_holds_disk (t2));
}

int
main (int argc, char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  progress_log = g_string_new (NULL);
  cache_dir = g_dir_make_tmp ("airlock-image-disk-XXXXXX", NULL);
  g_test_add_func ("/image/disk/unsafe-entries-rejected", test_unsafe);
  g_test_add_func ("/image/disk/build-once-and-reuse", test_build_main);
  g_test_add_func ("/image/disk/moved-cache-rehashed-once", test_moved_cache);
  g_test_add_func ("/image/disk/rewritten-in-place-rehashed", test_rewritten_in_place);
  g_test_add_func ("/image/disk/damaged-cache-rebuilt", test_damaged_cache);
  g_test_add_func ("/image/disk/bad-digest-caches-nothing", test_bad_digest);
  ret = g_test_run ();
  airlock_rm_rf (cache_dir);
  return ret;
}
