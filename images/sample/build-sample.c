/* build-sample: writes the sample OCI images (images/sample) without any
 * container engine, byte for byte the same on every build.
 *
 *   build-sample fetch --pins packages.ini --downloads DIR --output-dir DIR
 *       downloads busybox-static for amd64 and arm64 with apt-get (or uses a
 *       copy already in DIR), checks each .deb against its pin, and writes
 *       its bin/busybox as OUTPUT-DIR/busybox-ARCH.
 *
 *   build-sample image --name clean|egress|rpc|hostile --pins packages.ini
 *                      --busybox-amd64 F --busybox-arm64 F
 *                      --program-amd64 F --program-arm64 F
 *                      [--arm32 F] --layout DIR --archive FILE
 *       writes the image as an OCI image layout (DIR, skopeo's `oci:DIR`) and
 *       the same files as an oci-archive (FILE, `oci-archive:FILE`).
 *
 * The image: index.json → an image index (tag "latest") → one manifest per
 * arch (linux/amd64, linux/arm64/v8) → config and three gzip layers:
 *   1. busybox: /bin/busybox and its applets as symlinks, the usual dirs;
 *   2. the program at /usr/local/bin/, /etc/passwd and /etc/group with the
 *      user app (1000:1000), /srv (app's, the working directory), and
 *      /etc/airlock-deleted;
 *   3. /etc/.wh.airlock-deleted, the whiteout that deletes it again.
 * The hostile image (tests/hostile) has the multi-call test program as its
 * entrypoint, runs as root, and its second layer also holds
 * /usr/local/bin/testprog-suid (the same program, setuid root, mode 4755)
 * and on arm64 /bin/testprog-arm32 (--arm32, an AArch32 binary), and
 * /airlock-nodes, device nodes no workload may open (add_device_nodes).
 *
 * Deterministic: every tar entry has mtime 0, a fixed owner and mode, no
 * user or group names; entries are sorted by path; gzip headers carry no
 * name and mtime 0 (zlib's); JSON is compact with fixed member order.  The
 * output then depends only on the inputs' bytes (and zlib's deflate, which
 * does not change within a Debian release). */

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdarg.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SAMPLE_PACKAGE "busybox-static"
#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define CREATED "1970-01-01T00:00:00Z"
#define APP_UID 1000
#define APP_GID 1000

static const char *const sample_arches[] = { "amd64", "arm64" };

/* The busybox applets the image links in /bin: a shell and the tools a
 * test or a person poking at the image reaches for. */
static const char *const busybox_applets[] = {
  "ash", "cat", "chmod", "cp", "date", "echo", "env", "false", "grep", "head", "hostname",
  "id", "ln", "ls", "mkdir", "mv", "nc", "nslookup", "ps", "pwd", "rm", "sed", "sh", "sleep",
  "tail", "test", "touch", "true", "uname", "wget", "whoami",
};

typedef struct {
  const char *name;       /* clean, egress, rpc, hostile */
  const char *program;    /* its entrypoint's basename */
  const char *user;
  const char *marker;     /* the marker variable in its Env */
  gboolean suid_copy;     /* also usr/local/bin/PROGRAM-suid, setuid root */
  gboolean device_nodes;  /* also /airlock-nodes/: device nodes (add_device_nodes) */
} SampleSpec;

static const SampleSpec sample_specs[] = {
  { "clean", "clean-server", "app", "AIRLOCK_SAMPLE=clean", FALSE },
  { "egress", "egress-probe", "root", "AIRLOCK_SAMPLE=egress", FALSE },
  { "rpc", "rpc-server", "app", "AIRLOCK_SAMPLE=rpc", FALSE },
  /* Techniques are chosen with `-- COMMAND` (the Cmd). */
  { "hostile", "testprog", "root", "AIRLOCK_SAMPLE=hostile", TRUE, TRUE },
};

static gboolean
fail (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* Sets @error from the message; always FALSE, so `return fail (…)`. */
static gboolean
fail (GError **error, const char *format, ...)
{
  va_list args;
  GError *local_error;

  va_start (args, format);
  local_error = g_error_new_valist (G_IO_ERROR, G_IO_ERROR_FAILED, format, args);
  va_end (args);
  g_propagate_error (error, local_error);
  return FALSE;
}

/* ---- pins and the .deb ------------------------------------------------ */

typedef struct {
  char *version;
  char *sha256;
  guint64 size;
} Pin;

static void
pin_clear (Pin *pin)
{
  g_clear_pointer (&pin->version, g_free);
  g_clear_pointer (&pin->sha256, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Pin, pin_clear)

static gboolean
load_pin (const char *pins_path, const char *arch, Pin *ret_pin, GError **error)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *group = g_strdup_printf ("%s %s", arch, SAMPLE_PACKAGE);
  g_autoptr (GError) local_error = NULL;
  g_autofree char *size = NULL;
  Pin pin = { NULL, NULL, 0 };
  char *end = NULL;

  if (!g_key_file_load_from_file (kf, pins_path, G_KEY_FILE_NONE, &local_error))
    return fail (error, "cannot read the sample pins '%s': %s", pins_path, local_error->message);
  pin.version = g_key_file_get_string (kf, group, "version", NULL);
  pin.sha256 = g_key_file_get_string (kf, group, "sha256", NULL);
  size = g_key_file_get_string (kf, group, "size", NULL);
  if (size)
    pin.size = g_ascii_strtoull (size, &end, 10);
  if (!pin.version || !*pin.version || !pin.sha256 || strlen (pin.sha256) != 64 || !size
      || !end || *end || pin.size == 0)
    {
      pin_clear (&pin);
      return fail (error, "'%s': group [%s] needs version=, sha256= (64 hex digits) and size=",
                   pins_path, group);
    }
  *ret_pin = pin;
  return TRUE;
}

/* apt-get download's file name: the epoch's ':' becomes %3a. */
static char *
deb_name (const Pin *pin, const char *arch)
{
  g_auto (GStrv) parts = g_strsplit (pin->version, ":", -1);
  g_autofree char *version = g_strjoinv ("%3a", parts);

  return g_strdup_printf ("%s_%s_%s.deb", SAMPLE_PACKAGE, version, arch);
}

/* TRUE when @path is the pinned .deb; FALSE with @ret_why when it is not,
 * FALSE with @error when it cannot be read. */
static gboolean
deb_matches_pin (const char *path, const Pin *pin, char **ret_why, GError **error)
{
  g_autoptr (GMappedFile) mapped = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autofree char *sha256 = NULL;
  g_autoptr (GError) local_error = NULL;

  *ret_why = NULL;
  mapped = g_mapped_file_new (path, FALSE, &local_error);
  if (!mapped)
    return fail (error, "cannot read '%s': %s", path, local_error->message);
  if ((guint64) g_mapped_file_get_length (mapped) != pin->size)
    {
      *ret_why = g_strdup_printf ("it is %" G_GSIZE_FORMAT " bytes, the pin says %" G_GUINT64_FORMAT,
                                  g_mapped_file_get_length (mapped), pin->size);
      return FALSE;
    }
  bytes = g_mapped_file_get_bytes (mapped);
  sha256 = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  if (!g_str_equal (sha256, pin->sha256))
    {
      *ret_why = g_strdup_printf ("its sha256 is %s, the pin says %s", sha256, pin->sha256);
      return FALSE;
    }
  return TRUE;
}

static gboolean
apt_download (const Pin *pin, const char *arch, const char *pins_path, const char *downloads,
              GError **error)
{
  g_autofree char *spec = g_strdup_printf ("%s:%s=%s", SAMPLE_PACKAGE, arch, pin->version);
  g_autofree char *name = deb_name (pin, arch);
  g_autofree char *apt_get = g_find_program_in_path ("apt-get");
  g_autoptr (GSubprocessLauncher) launcher = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  g_autofree char *output = NULL;
  g_autoptr (GError) local_error = NULL;

  if (!apt_get)
    return fail (error, "cannot download %s '%s' for %s: apt-get is not installed; put '%s' "
                 "(from a Debian mirror or snapshot.debian.org) in '%s', or configure with "
                 "-Dsample_images=false",
                 SAMPLE_PACKAGE, pin->version, arch, name, downloads);
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                        | G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_subprocess_launcher_set_cwd (launcher, downloads);
  g_subprocess_launcher_setenv (launcher, "LC_ALL", "C", TRUE);
  proc = g_subprocess_launcher_spawn (launcher, &local_error, apt_get, "download", spec, NULL);
  if (!proc || !g_subprocess_communicate_utf8 (proc, NULL, NULL, &output, NULL, &local_error))
    return fail (error, "cannot download %s '%s' for %s: cannot run apt-get: %s",
                 SAMPLE_PACKAGE, pin->version, arch, local_error->message);
  if (!g_subprocess_get_successful (proc))
    return fail (error,
                 "cannot download %s '%s' for %s: apt-get download failed (%s). The pin may "
                 "have left the archive (Debian replaces a package's version when a stable or "
                 "security update supersedes it), or apt may not know this arch or its lists "
                 "may be stale (dpkg --add-architecture %s && apt-get update). To fix it: "
                 "update the pin in '%s' (its comments say how), or put '%s' in '%s' by hand "
                 "(snapshot.debian.org keeps every version); or configure with "
                 "-Dsample_images=false to build without the sample images",
                 SAMPLE_PACKAGE, pin->version, arch, g_strstrip (output), arch, pins_path,
                 name, downloads);
  return TRUE;
}

/* The pinned .deb in @downloads, downloaded when missing or wrong; a second
 * wrong download means the archive serves something else than the pin. */
static char *
fetch_deb (const Pin *pin, const char *arch, const char *pins_path, const char *downloads,
           GError **error)
{
  g_autofree char *name = deb_name (pin, arch);
  g_autofree char *path = g_build_filename (downloads, name, NULL);

  if (g_mkdir_with_parents (downloads, 0755) < 0)
    {
      int saved_errno = errno;
      fail (error, "cannot create '%s': %s", downloads, g_strerror (saved_errno));
      return NULL;
    }
  for (guint downloads_done = 0;; downloads_done++)
    {
      if (g_file_test (path, G_FILE_TEST_EXISTS))
        {
          g_autofree char *why = NULL;

          if (deb_matches_pin (path, pin, &why, error))
            return g_steal_pointer (&path);
          if (!why)
            return NULL;
          g_unlink (path);
          if (downloads_done == 1)
            {
              fail (error, "%s '%s' for %s, downloaded again, does not match its pin in '%s': "
                    "%s; the archive's copy is not the pinned one",
                    SAMPLE_PACKAGE, pin->version, arch, pins_path, why);
              return NULL;
            }
        }
      if (!apt_download (pin, arch, pins_path, downloads, error))
        return NULL;
      if (!g_file_test (path, G_FILE_TEST_EXISTS))
        {
          fail (error, "apt-get download of %s '%s' for %s succeeded but left no '%s'",
                SAMPLE_PACKAGE, pin->version, arch, path);
          return NULL;
        }
    }
}

/* Reads the rest of @a's current entry. */
static GBytes *
read_entry_data (struct archive *a, const char *what, GError **error)
{
  g_autoptr (GByteArray) data = g_byte_array_new ();
  guint8 buf[65536];
  la_ssize_t n;

  while ((n = archive_read_data (a, buf, sizeof buf)) > 0)
    g_byte_array_append (data, buf, (guint) n);
  if (n < 0)
    {
      fail (error, "cannot read %s: %s", what, archive_error_string (a));
      return NULL;
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&data));
}

/* bin/busybox out of the .deb (an ar archive whose data.tar.* holds it). */
static GBytes *
busybox_from_deb (const char *deb, GError **error)
{
  struct archive *outer = archive_read_new ();
  struct archive *inner = NULL;
  struct archive_entry *entry;
  g_autoptr (GBytes) data_tar = NULL;
  g_autoptr (GBytes) busybox = NULL;
  g_autofree char *what = g_strdup_printf ("the data of '%s'", deb);

  archive_read_support_format_ar (outer);
  if (archive_read_open_filename (outer, deb, 65536) != ARCHIVE_OK)
    fail (error, "cannot open '%s' as a .deb: %s", deb, archive_error_string (outer));
  else
    while (archive_read_next_header (outer, &entry) == ARCHIVE_OK)
      if (g_str_has_prefix (archive_entry_pathname (entry), "data.tar"))
        {
          data_tar = read_entry_data (outer, what, error);
          break;
        }
  archive_read_free (outer);
  if (!data_tar)
    {
      if (error && !*error)
        fail (error, "'%s' has no data.tar member", deb);
      return NULL;
    }

  inner = archive_read_new ();
  archive_read_support_filter_all (inner);
  archive_read_support_format_tar (inner);
  if (archive_read_open_memory (inner, g_bytes_get_data (data_tar, NULL),
                                g_bytes_get_size (data_tar)) != ARCHIVE_OK)
    fail (error, "cannot open %s: %s", what, archive_error_string (inner));
  else
    while (archive_read_next_header (inner, &entry) == ARCHIVE_OK)
      if (g_str_equal (archive_entry_pathname (entry), "./bin/busybox")
          && archive_entry_filetype (entry) == AE_IFREG)
        {
          busybox = read_entry_data (inner, what, error);
          break;
        }
  archive_read_free (inner);
  if (!busybox && error && !*error)
    fail (error, "'%s' has no ./bin/busybox", deb);
  return g_steal_pointer (&busybox);
}

static gboolean
cmd_fetch (const char *pins, const char *downloads, const char *output_dir, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (sample_arches); i++)
    {
      const char *arch = sample_arches[i];
      g_auto (Pin) pin = { NULL, NULL, 0 };
      g_autofree char *deb = NULL;
      g_autofree char *out = g_strdup_printf ("%s/busybox-%s", output_dir, arch);
      g_autoptr (GBytes) busybox = NULL;

      if (!load_pin (pins, arch, &pin, error))
        return FALSE;
      deb = fetch_deb (&pin, arch, pins, downloads, error);
      if (!deb)
        return FALSE;
      busybox = busybox_from_deb (deb, error);
      if (!busybox)
        return FALSE;
      if (!g_file_set_contents (out, g_bytes_get_data (busybox, NULL), g_bytes_get_size (busybox),
                                error))
        return FALSE;
    }
  return TRUE;
}

/* ---- layers ------------------------------------------------------------ */

typedef struct {
  char *path;        /* relative, no leading "./" or trailing "/" */
  unsigned type;     /* AE_IFDIR, AE_IFREG, AE_IFLNK, AE_IFCHR, AE_IFBLK */
  unsigned mode;     /* permission bits */
  unsigned uid, gid;
  GBytes *content;   /* AE_IFREG */
  char *target;      /* AE_IFLNK */
  unsigned major, minor; /* AE_IFCHR, AE_IFBLK */
} LayerEntry;

static void
layer_entry_free (LayerEntry *e)
{
  g_free (e->path);
  g_clear_pointer (&e->content, g_bytes_unref);
  g_free (e->target);
  g_free (e);
}

static void
add_dir (GPtrArray *entries, const char *path, unsigned mode, unsigned uid, unsigned gid)
{
  LayerEntry *e = g_new0 (LayerEntry, 1);

  *e = (LayerEntry) { g_strdup (path), AE_IFDIR, mode, uid, gid, NULL, NULL };
  g_ptr_array_add (entries, e);
}

static void
add_file (GPtrArray *entries, const char *path, unsigned mode, GBytes *content)
{
  LayerEntry *e = g_new0 (LayerEntry, 1);

  *e = (LayerEntry) { g_strdup (path), AE_IFREG, mode, 0, 0, g_bytes_ref (content), NULL };
  g_ptr_array_add (entries, e);
}

static void
add_text (GPtrArray *entries, const char *path, unsigned mode, const char *text)
{
  g_autoptr (GBytes) content = g_bytes_new (text, strlen (text));

  add_file (entries, path, mode, content);
}

static void
add_symlink (GPtrArray *entries, const char *path, const char *target)
{
  LayerEntry *e = g_new0 (LayerEntry, 1);

  *e = (LayerEntry) { g_strdup (path), AE_IFLNK, 0777, 0, 0, NULL, g_strdup (target) };
  g_ptr_array_add (entries, e);
}

static void
add_node (GPtrArray *entries, const char *path, unsigned type, unsigned major, unsigned minor)
{
  LayerEntry *e = g_new0 (LayerEntry, 1);

  *e = (LayerEntry) { g_strdup (path), type, 0666, 0, 0, NULL, NULL, major, minor };
  g_ptr_array_add (entries, e);
}

/* The hostile image's /airlock-nodes (tests/hostile: image-nodes): device
 * nodes a layer can carry though no workload may make one, mode 0666.
 * Where the guest's devices are: null, the kernel log, the consoles of
 * both arches, the disk (virtio-blk: 254 or 253), every dynamic character
 * major (234-254: the virtio-serial ports are one of them) and the top
 * dynamic misc minors (/dev/userfaultfd is one).  None may open. */
static void
add_device_nodes (GPtrArray *entries)
{
  static const struct { const char *name; unsigned type, major, minor; } fixed[] = {
    { "null", AE_IFCHR, 1, 3 }, { "kmsg", AE_IFCHR, 1, 11 }, { "console", AE_IFCHR, 5, 1 },
    { "ttyS0", AE_IFCHR, 4, 64 }, { "ttyAMA0", AE_IFCHR, 204, 64 }, { "hvc0", AE_IFCHR, 229, 0 },
    { "vda-254", AE_IFBLK, 254, 0 }, { "vda-253", AE_IFBLK, 253, 0 },
  };

  add_dir (entries, "airlock-nodes", 0755, 0, 0);
  for (guint i = 0; i < G_N_ELEMENTS (fixed); i++)
    {
      g_autofree char *path = g_strconcat ("airlock-nodes/", fixed[i].name, NULL);

      add_node (entries, path, fixed[i].type, fixed[i].major, fixed[i].minor);
    }
  for (unsigned major = 234; major <= 254; major++)
    for (unsigned minor = 0; minor < 2; minor++)
      {
        g_autofree char *path = g_strdup_printf ("airlock-nodes/char-%u-%u", major, minor);

        add_node (entries, path, AE_IFCHR, major, minor);
      }
  for (unsigned minor = 120; minor < 128; minor++)
    {
      g_autofree char *path = g_strdup_printf ("airlock-nodes/misc-%u", minor);

      add_node (entries, path, AE_IFCHR, 10, minor);
    }
}

static int
compare_entries (gconstpointer a, gconstpointer b)
{
  const LayerEntry *ea = *(const LayerEntry *const *) a;
  const LayerEntry *eb = *(const LayerEntry *const *) b;

  return strcmp (ea->path, eb->path);
}

static la_ssize_t
write_to_bytes (struct archive *a, void *client_data, const void *buffer, size_t length)
{
  g_byte_array_append (client_data, buffer, (guint) length);
  return (la_ssize_t) length;
}

/* The entries as a tar stream, sorted by path (a parent sorts before its
 * children, so every directory exists before what it holds). */
static GBytes *
tar_entries (GPtrArray *entries, const char *what, GError **error)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  struct archive *a = archive_write_new ();
  gboolean ok = TRUE;

  g_ptr_array_sort (entries, compare_entries);
  /* ustar: no pax headers (which could carry atime or a pid), names of our
   * own choosing are short; the stream ends right after the end blocks. */
  archive_write_set_format_ustar (a);
  archive_write_set_bytes_in_last_block (a, 1);
  if (archive_write_open (a, out, NULL, write_to_bytes, NULL) != ARCHIVE_OK)
    ok = fail (error, "cannot write %s: %s", what, archive_error_string (a));
  for (guint i = 0; ok && i < entries->len; i++)
    {
      const LayerEntry *e = entries->pdata[i];
      struct archive_entry *entry = archive_entry_new ();
      gsize size = e->content ? g_bytes_get_size (e->content) : 0;
      g_autofree char *name = e->type == AE_IFDIR ? g_strconcat (e->path, "/", NULL)
                                                  : g_strdup (e->path);

      archive_entry_set_pathname (entry, name);
      archive_entry_set_filetype (entry, e->type);
      archive_entry_set_perm (entry, e->mode);
      archive_entry_set_uid (entry, e->uid);
      archive_entry_set_gid (entry, e->gid);
      archive_entry_set_mtime (entry, 0, 0);
      archive_entry_set_size (entry, size);
      if (e->target)
        archive_entry_set_symlink (entry, e->target);
      if (e->type == AE_IFCHR || e->type == AE_IFBLK)
        {
          archive_entry_set_rdevmajor (entry, e->major);
          archive_entry_set_rdevminor (entry, e->minor);
        }
      if (archive_write_header (a, entry) != ARCHIVE_OK
          || (size && archive_write_data (a, g_bytes_get_data (e->content, NULL), size)
                        != (la_ssize_t) size))
        ok = fail (error, "cannot write '%s' into %s: %s", e->path, what, archive_error_string (a));
      archive_entry_free (entry);
    }
  if (ok && archive_write_close (a) != ARCHIVE_OK)
    ok = fail (error, "cannot finish %s: %s", what, archive_error_string (a));
  archive_write_free (a);
  return ok ? g_byte_array_free_to_bytes (g_steal_pointer (&out)) : NULL;
}

/* gzip with GIO's zlib compressor: no file info set, so the header has no
 * name and mtime 0. */
static GBytes *
gzip_bytes (GBytes *data, GError **error)
{
  g_autoptr (GZlibCompressor) compressor = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
  g_autoptr (GOutputStream) memory = g_memory_output_stream_new_resizable ();
  g_autoptr (GOutputStream) stream = g_converter_output_stream_new (memory, G_CONVERTER (compressor));

  if (!g_output_stream_write_all (stream, g_bytes_get_data (data, NULL), g_bytes_get_size (data),
                                  NULL, NULL, error)
      || !g_output_stream_close (stream, NULL, error))
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (memory));
}

/* ---- blobs ------------------------------------------------------------- */

typedef struct {
  GHashTable *blobs;   /* "sha256:HEX" → GBytes */
} Layout;

/* Stores @bytes as a blob; returns its digest ("sha256:HEX"). */
static char *
layout_add_blob (Layout *layout, GBytes *bytes)
{
  g_autofree char *hex = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  char *digest = g_strconcat ("sha256:", hex, NULL);

  g_hash_table_replace (layout->blobs, g_strdup (digest), g_bytes_ref (bytes));
  return digest;
}

static GBytes *
json_to_bytes (JsonBuilder *builder)
{
  g_autoptr (JsonNode) root = json_builder_get_root (builder);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  gsize len = 0;
  char *text;

  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, &len);
  return g_bytes_new_take (text, len);
}

static void
add_descriptor (JsonBuilder *b, const char *media_type, const char *digest, GBytes *bytes)
{
  json_builder_set_member_name (b, "mediaType");
  json_builder_add_string_value (b, media_type);
  json_builder_set_member_name (b, "digest");
  json_builder_add_string_value (b, digest);
  json_builder_set_member_name (b, "size");
  json_builder_add_int_value (b, (gint64) g_bytes_get_size (bytes));
}

static void
add_string_array (JsonBuilder *b, const char *member, const char *const *values)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (; *values; values++)
    json_builder_add_string_value (b, *values);
  json_builder_end_array (b);
}

static const char passwd_text[] =
  "root:x:0:0:root:/root:/bin/sh\n"
  "app:x:1000:1000:airlock sample user:/srv:/bin/sh\n"
  "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n";
static const char group_text[] =
  "root:x:0:\n"
  "app:x:1000:\n"
  "nogroup:x:65534:\n";
static const char deleted_text[] =
  "This file is added by the image's second layer and deleted by a whiteout\n"
  "(/etc/.wh.airlock-deleted) in its third: a run must not see it.\n";

/* The three layers of @spec for one arch, as (diff_id, gzip) pairs. */
static gboolean
build_layers (const SampleSpec *spec, GBytes *busybox, GBytes *program, GBytes *arm32,
              GBytes *ret_tars[3], GError **error)
{
  g_autoptr (GPtrArray) l1 = g_ptr_array_new_with_free_func ((GDestroyNotify) layer_entry_free);
  g_autoptr (GPtrArray) l2 = g_ptr_array_new_with_free_func ((GDestroyNotify) layer_entry_free);
  g_autoptr (GPtrArray) l3 = g_ptr_array_new_with_free_func ((GDestroyNotify) layer_entry_free);
  static const char *const base_dirs[] = {
    "bin", "dev", "etc", "proc", "sbin", "sys", "usr", "usr/bin", "usr/sbin", "var",
  };
  g_autofree char *program_path = g_strconcat ("usr/local/bin/", spec->program, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (base_dirs); i++)
    add_dir (l1, base_dirs[i], 0755, 0, 0);
  add_dir (l1, "root", 0700, 0, 0);
  add_dir (l1, "tmp", 01777, 0, 0);
  add_file (l1, "bin/busybox", 0755, busybox);
  for (guint i = 0; i < G_N_ELEMENTS (busybox_applets); i++)
    {
      g_autofree char *link = g_strconcat ("bin/", busybox_applets[i], NULL);
      add_symlink (l1, link, "busybox");
    }

  add_dir (l2, "etc", 0755, 0, 0);
  add_text (l2, "etc/passwd", 0644, passwd_text);
  add_text (l2, "etc/group", 0644, group_text);
  add_text (l2, "etc/airlock-deleted", 0644, deleted_text);
  add_dir (l2, "srv", 0755, APP_UID, APP_GID);
  add_dir (l2, "usr", 0755, 0, 0);
  add_dir (l2, "usr/local", 0755, 0, 0);
  add_dir (l2, "usr/local/bin", 0755, 0, 0);
  add_file (l2, program_path, 0755, program);
  if (spec->suid_copy)
    {
      g_autofree char *suid_path = g_strconcat (program_path, "-suid", NULL);

      add_file (l2, suid_path, 04755, program);
    }
  if (arm32)
    {
      add_dir (l2, "bin", 0755, 0, 0);
      add_file (l2, "bin/testprog-arm32", 0755, arm32);
    }
  if (spec->device_nodes)
    add_device_nodes (l2);

  add_dir (l3, "etc", 0755, 0, 0);
  add_text (l3, "etc/.wh.airlock-deleted", 0644, "");

  ret_tars[0] = tar_entries (l1, "layer 1", error);
  ret_tars[1] = ret_tars[0] ? tar_entries (l2, "layer 2", error) : NULL;
  ret_tars[2] = ret_tars[1] ? tar_entries (l3, "layer 3", error) : NULL;
  return ret_tars[2] != NULL;
}

/* One arch's config and manifest; returns the manifest's bytes and digest. */
static GBytes *
build_manifest (Layout *layout, const SampleSpec *spec, const char *arch, const Pin *pin,
                GBytes *busybox, GBytes *program, GBytes *arm32, char **ret_digest, GError **error)
{
  GBytes *tars[3] = { NULL, NULL, NULL };
  GBytes *gzips[3] = { NULL, NULL, NULL };
  char *layer_digests[3] = { NULL, NULL, NULL };
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GBytes) config = NULL;
  g_autofree char *config_digest = NULL;
  g_autofree char *entrypoint = g_strconcat ("/usr/local/bin/", spec->program, NULL);
  const char *env[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                        spec->marker, NULL };
  const char *entrypoint_argv[] = { entrypoint, NULL };
  GBytes *manifest = NULL;
  gboolean ok = build_layers (spec, busybox, program, arm32, tars, error);

  for (guint i = 0; ok && i < 3; i++)
    {
      gzips[i] = gzip_bytes (tars[i], error);
      ok = gzips[i] != NULL;
      if (ok)
        layer_digests[i] = layout_add_blob (layout, gzips[i]);
    }
  if (!ok)
    goto out;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "created");
  json_builder_add_string_value (b, CREATED);
  json_builder_set_member_name (b, "architecture");
  json_builder_add_string_value (b, arch);
  if (g_str_equal (arch, "arm64"))
    {
      json_builder_set_member_name (b, "variant");
      json_builder_add_string_value (b, "v8");
    }
  json_builder_set_member_name (b, "os");
  json_builder_add_string_value (b, "linux");
  json_builder_set_member_name (b, "config");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "User");
  json_builder_add_string_value (b, spec->user);
  add_string_array (b, "Env", env);
  add_string_array (b, "Entrypoint", entrypoint_argv);
  json_builder_set_member_name (b, "WorkingDir");
  json_builder_add_string_value (b, "/srv");
  json_builder_end_object (b);
  json_builder_set_member_name (b, "rootfs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "layers");
  json_builder_set_member_name (b, "diff_ids");
  json_builder_begin_array (b);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *hex = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, tars[i]);
      g_autofree char *diff_id = g_strconcat ("sha256:", hex, NULL);
      json_builder_add_string_value (b, diff_id);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "history");
  json_builder_begin_array (b);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *created_by = NULL;

      if (i == 0)
        created_by = g_strdup_printf ("airlock images/sample: %s %s from Debian, bin/busybox "
                                      "and its applet links", SAMPLE_PACKAGE, pin->version);
      else if (i == 1)
        created_by = g_strdup_printf ("airlock images/sample: /usr/local/bin/%s%s, /etc/passwd "
                                      "and /etc/group (user app), /srv, /etc/airlock-deleted%s%s",
                                      spec->program, spec->suid_copy ? " and its setuid copy" : "",
                                      arm32 ? ", /bin/testprog-arm32" : "",
                                      spec->device_nodes ? ", /airlock-nodes" : "");
      else
        created_by = g_strdup ("airlock images/sample: whiteout of /etc/airlock-deleted");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "created");
      json_builder_add_string_value (b, CREATED);
      json_builder_set_member_name (b, "created_by");
      json_builder_add_string_value (b, created_by);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  config = json_to_bytes (b);
  config_digest = layout_add_blob (layout, config);

  json_builder_reset (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "schemaVersion");
  json_builder_add_int_value (b, 2);
  json_builder_set_member_name (b, "mediaType");
  json_builder_add_string_value (b, MT_MANIFEST);
  json_builder_set_member_name (b, "config");
  json_builder_begin_object (b);
  add_descriptor (b, MT_CONFIG, config_digest, config);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "layers");
  json_builder_begin_array (b);
  for (guint i = 0; i < 3; i++)
    {
      json_builder_begin_object (b);
      add_descriptor (b, MT_LAYER_GZIP, layer_digests[i], gzips[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  manifest = json_to_bytes (b);
  *ret_digest = layout_add_blob (layout, manifest);

out:
  for (guint i = 0; i < 3; i++)
    {
      g_clear_pointer (&tars[i], g_bytes_unref);
      g_clear_pointer (&gzips[i], g_bytes_unref);
      g_clear_pointer (&layer_digests[i], g_free);
    }
  return manifest;
}

/* ---- output ------------------------------------------------------------ */

static gboolean
remove_tree (const char *path, GError **error)
{
  GStatBuf st;

  if (g_lstat (path, &st) < 0)
    return errno == ENOENT ? TRUE : fail (error, "cannot remove '%s': %s", path, g_strerror (errno));
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr (GDir) dir = g_dir_open (path, 0, error);
      const char *name;

      if (!dir)
        return FALSE;
      while ((name = g_dir_read_name (dir)))
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (!remove_tree (child, error))
            return FALSE;
        }
      if (g_rmdir (path) < 0)
        return fail (error, "cannot remove '%s': %s", path, g_strerror (errno));
      return TRUE;
    }
  if (g_unlink (path) < 0)
    return fail (error, "cannot remove '%s': %s", path, g_strerror (errno));
  return TRUE;
}

static gboolean
write_file (const char *dir, const char *name, GBytes *bytes, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);

  return g_file_set_contents (path, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), error);
}

/* Writes the layout's files into a fresh directory, then puts it in place
 * of @layout_dir, and the same files as a tar at @archive_path. */
static gboolean
write_outputs (Layout *layout, GBytes *index_json, GBytes *oci_layout, const char *layout_dir,
               const char *archive_path, GError **error)
{
  g_autofree char *tmp = g_strconcat (layout_dir, ".tmp", NULL);
  g_autofree char *blobs = g_build_filename (tmp, "blobs", "sha256", NULL);
  g_autofree char *archive_tmp = g_strconcat (archive_path, ".tmp", NULL);
  g_autoptr (GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) layer_entry_free);
  g_autoptr (GBytes) tar = NULL;
  GHashTableIter iter;
  gpointer key, value;

  if (!remove_tree (tmp, error))
    return FALSE;
  if (g_mkdir_with_parents (blobs, 0755) < 0)
    return fail (error, "cannot create '%s': %s", blobs, g_strerror (errno));
  add_dir (entries, "blobs", 0755, 0, 0);
  add_dir (entries, "blobs/sha256", 0755, 0, 0);
  g_hash_table_iter_init (&iter, layout->blobs);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const char *hex = (const char *) key + strlen ("sha256:");
      g_autofree char *name = g_strconcat ("blobs/sha256/", hex, NULL);

      if (!write_file (tmp, name, value, error))
        return FALSE;
      add_file (entries, name, 0644, value);
    }
  if (!write_file (tmp, "index.json", index_json, error)
      || !write_file (tmp, "oci-layout", oci_layout, error))
    return FALSE;
  add_file (entries, "index.json", 0644, index_json);
  add_file (entries, "oci-layout", 0644, oci_layout);

  if (!remove_tree (layout_dir, error))
    return FALSE;
  if (g_rename (tmp, layout_dir) < 0)
    return fail (error, "cannot rename '%s' to '%s': %s", tmp, layout_dir, g_strerror (errno));

  tar = tar_entries (entries, archive_path, error);
  if (!tar)
    return FALSE;
  if (!g_file_set_contents (archive_tmp, g_bytes_get_data (tar, NULL), g_bytes_get_size (tar), error))
    return FALSE;
  if (g_rename (archive_tmp, archive_path) < 0)
    return fail (error, "cannot rename '%s' to '%s': %s", archive_tmp, archive_path,
                 g_strerror (errno));
  return TRUE;
}

static GBytes *
read_bytes (const char *path, GError **error)
{
  char *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;
  return g_bytes_new_take (data, len);
}

static gboolean
cmd_image (const char *name, const char *pins, char **busybox_paths, char **program_paths,
           const char *arm32_path, const char *layout_dir, const char *archive_path,
           GError **error)
{
  const SampleSpec *spec = NULL;
  Layout layout = { g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                           (GDestroyNotify) g_bytes_unref) };
  /* Frees the layout's blobs on every return. */
  g_autoptr (GHashTable) blobs G_GNUC_UNUSED = layout.blobs;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (GBytes) image_index = NULL;
  g_autoptr (GBytes) index_json = NULL;
  g_autoptr (GBytes) oci_layout = g_bytes_new_static ("{\"imageLayoutVersion\":\"1.0.0\"}",
                                                      strlen ("{\"imageLayoutVersion\":\"1.0.0\"}"));
  g_autofree char *image_index_digest = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (sample_specs); i++)
    if (g_str_equal (sample_specs[i].name, name))
      spec = &sample_specs[i];
  if (!spec)
    return fail (error, "unknown sample image '%s' (known: clean, egress, rpc, hostile)", name);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "schemaVersion");
  json_builder_add_int_value (b, 2);
  json_builder_set_member_name (b, "mediaType");
  json_builder_add_string_value (b, MT_INDEX);
  json_builder_set_member_name (b, "manifests");
  json_builder_begin_array (b);
  for (guint i = 0; i < G_N_ELEMENTS (sample_arches); i++)
    {
      const char *arch = sample_arches[i];
      g_auto (Pin) pin = { NULL, NULL, 0 };
      g_autoptr (GBytes) busybox = NULL;
      g_autoptr (GBytes) program = NULL;
      g_autoptr (GBytes) arm32 = NULL;
      g_autoptr (GBytes) manifest = NULL;
      g_autofree char *digest = NULL;

      if (!load_pin (pins, arch, &pin, error)
          || !(busybox = read_bytes (busybox_paths[i], error))
          || !(program = read_bytes (program_paths[i], error))
          || (arm32_path && g_str_equal (arch, "arm64") && !(arm32 = read_bytes (arm32_path, error))))
        return FALSE;
      manifest = build_manifest (&layout, spec, arch, &pin, busybox, program, arm32, &digest, error);
      if (!manifest)
        return FALSE;
      json_builder_begin_object (b);
      add_descriptor (b, MT_MANIFEST, digest, manifest);
      json_builder_set_member_name (b, "platform");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "architecture");
      json_builder_add_string_value (b, arch);
      json_builder_set_member_name (b, "os");
      json_builder_add_string_value (b, "linux");
      if (g_str_equal (arch, "arm64"))
        {
          json_builder_set_member_name (b, "variant");
          json_builder_add_string_value (b, "v8");
        }
      json_builder_end_object (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  image_index = json_to_bytes (b);
  image_index_digest = layout_add_blob (&layout, image_index);

  /* index.json is not a blob and so has no digest: it points at the image
   * index, whose digest is the image's name for both arches. */
  json_builder_reset (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "schemaVersion");
  json_builder_add_int_value (b, 2);
  json_builder_set_member_name (b, "mediaType");
  json_builder_add_string_value (b, MT_INDEX);
  json_builder_set_member_name (b, "manifests");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  add_descriptor (b, MT_INDEX, image_index_digest, image_index);
  json_builder_set_member_name (b, "annotations");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "org.opencontainers.image.ref.name");
  json_builder_add_string_value (b, "latest");
  json_builder_end_object (b);
  json_builder_end_object (b);
  json_builder_end_array (b);
  json_builder_end_object (b);
  index_json = json_to_bytes (b);

  return write_outputs (&layout, index_json, oci_layout, layout_dir, archive_path, error);
}

int
main (int argc, char **argv)
{
  g_autofree char *pins = NULL, *downloads = NULL, *output_dir = NULL, *name = NULL;
  g_autofree char *layout = NULL, *archive = NULL, *arm32 = NULL;
  g_autofree char *busybox_amd64 = NULL, *busybox_arm64 = NULL;
  g_autofree char *program_amd64 = NULL, *program_arm64 = NULL;
  GOptionEntry entries[] = {
    { "pins", 0, 0, G_OPTION_ARG_FILENAME, &pins, "the pinned packages (packages.ini)", "FILE" },
    { "downloads", 0, 0, G_OPTION_ARG_FILENAME, &downloads, "fetch: where the .debs go", "DIR" },
    { "output-dir", 0, 0, G_OPTION_ARG_FILENAME, &output_dir, "fetch: where busybox-ARCH go", "DIR" },
    { "name", 0, 0, G_OPTION_ARG_STRING, &name, "image: clean, egress, rpc or hostile", "NAME" },
    { "busybox-amd64", 0, 0, G_OPTION_ARG_FILENAME, &busybox_amd64, "image: busybox", "FILE" },
    { "busybox-arm64", 0, 0, G_OPTION_ARG_FILENAME, &busybox_arm64, "image: busybox", "FILE" },
    { "program-amd64", 0, 0, G_OPTION_ARG_FILENAME, &program_amd64, "image: entrypoint", "FILE" },
    { "program-arm64", 0, 0, G_OPTION_ARG_FILENAME, &program_arm64, "image: entrypoint", "FILE" },
    { "arm32", 0, 0, G_OPTION_ARG_FILENAME, &arm32, "image: an AArch32 binary for arm64's /bin/testprog-arm32", "FILE" },
    { "layout", 0, 0, G_OPTION_ARG_FILENAME, &layout, "image: the OCI layout to write", "DIR" },
    { "archive", 0, 0, G_OPTION_ARG_FILENAME, &archive, "image: the oci-archive to write", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("fetch|image - build the sample OCI images");
  g_autoptr (GError) error = NULL;
  gboolean ok;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("build-sample: %s\n", error->message);
      return 2;
    }
  if (argc == 2 && g_str_equal (argv[1], "fetch") && pins && downloads && output_dir)
    ok = cmd_fetch (pins, downloads, output_dir, &error);
  else if (argc == 2 && g_str_equal (argv[1], "image") && pins && name && busybox_amd64
           && busybox_arm64 && program_amd64 && program_arm64 && layout && archive)
    {
      char *busybox_paths[] = { busybox_amd64, busybox_arm64 };
      char *program_paths[] = { program_amd64, program_arm64 };

      ok = cmd_image (name, pins, busybox_paths, program_paths, arm32, layout, archive, &error);
    }
  else
    {
      g_printerr ("usage: build-sample fetch --pins FILE --downloads DIR --output-dir DIR\n"
                  "       build-sample image --name NAME --pins FILE --busybox-amd64 F "
                  "--busybox-arm64 F --program-amd64 F --program-arm64 F [--arm32 F] --layout DIR "
                  "--archive FILE\n");
      return 2;
    }
  if (!ok)
    {
      g_printerr ("build-sample: %s\n", error->message);
      return 1;
    }
  return 0;
}
