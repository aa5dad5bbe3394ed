/* OCI image intake: every layout (oci:, oci-archive:, docker-archive:),
 * index → per-arch manifest, layer streams, and each kind of bad input,
 * from fixture images written here with the right (or deliberately wrong)
 * digests.  Also the User and command resolution the run relies on. */
#define _GNU_SOURCE /* setresuid */

#include "config.h"

#include <airlock.h>

#include "image/image.h"
#include "image/disk-private.h"
#include "image/image.h"
#include "fsutil-private.h"
#include "image/layer-stream-private.h"
#include "image/printable-private.h"
#include "image/remote-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <grp.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_LAYER "application/vnd.oci.image.layer.v1.tar"
#define MT_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define MT_LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"

/* ---- helpers ------------------------------------------------------------ */

static char *
sha256_of (GBytes *bytes)
{
  return g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
}

/* The files of an image, in archive order. */
typedef struct {
  GPtrArray *paths;           /* char * */
  GHashTable *files;          /* path → GBytes */
} Layout;

static Layout *
layout_new (void)
{
  Layout *l = g_new0 (Layout, 1);

  l->paths = g_ptr_array_new_with_free_func (g_free);
  l->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
  return l;
}

static void
layout_free (Layout *l)
{
  g_ptr_array_unref (l->paths);
  g_hash_table_unref (l->files);
  g_free (l);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Layout, layout_free)

static void
layout_put (Layout *l, const char *path, GBytes *bytes)
{
  if (!g_hash_table_contains (l->files, path))
    g_ptr_array_add (l->paths, g_strdup (path));
  g_hash_table_insert (l->files, g_strdup (path), g_bytes_ref (bytes));
}

static void
layout_put_text (Layout *l, const char *path, const char *text)
{
  g_autoptr (GBytes) bytes = g_bytes_new (text, strlen (text));
  layout_put (l, path, bytes);
}

static void
layout_remove (Layout *l, const char *path)
{
  g_hash_table_remove (l->files, path);
  for (guint i = 0; i < l->paths->len; i++)
    if (g_str_equal (l->paths->pdata[i], path))
      g_ptr_array_remove_index (l->paths, i--);
}

static char *
blob_path (const char *digest)
{
  return g_strconcat ("blobs/sha256/", digest + strlen ("sha256:"), NULL);
}

/* Stores @bytes as a blob; returns its digest. */
static char *
layout_blob (Layout *l, GBytes *bytes)
{
  g_autofree char *hex = sha256_of (bytes);
  g_autofree char *path = g_strconcat ("blobs/sha256/", hex, NULL);

  layout_put (l, path, bytes);
  return g_strconcat ("sha256:", hex, NULL);
}

static char *
layout_blob_text (Layout *l, const char *text)
{
  g_autoptr (GBytes) bytes = g_bytes_new (text, strlen (text));
  return layout_blob (l, bytes);
}

/* Replaces a blob's bytes, keeping its name (a tampered blob). */
static void
layout_tamper (Layout *l, const char *digest)
{
  g_autofree char *path = blob_path (digest);
  GBytes *old = g_hash_table_lookup (l->files, path);
  gsize size = g_bytes_get_size (old);
  guint8 *data = g_memdup2 (g_bytes_get_data (old, NULL), size);
  g_autoptr (GBytes) tampered = NULL;

  data[size / 2] ^= 0x20;
  tampered = g_bytes_new_take (data, size);
  layout_put (l, path, tampered);
}

static void
layout_write_dir (Layout *l, const char *dir)
{
  for (guint i = 0; i < l->paths->len; i++)
    {
      const char *path = l->paths->pdata[i];
      GBytes *bytes = g_hash_table_lookup (l->files, path);
      g_autofree char *full = g_build_filename (dir, path, NULL);
      g_autofree char *parent = g_path_get_dirname (full);
      gsize size;
      const char *data = g_bytes_get_data (bytes, &size);

      g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
      g_assert_true (g_file_set_contents (full, data, size, NULL));
    }
}

static la_ssize_t
append_to_array (struct archive *a, void *user_data, const void *buffer, size_t length)
{
  g_byte_array_append (user_data, buffer, length);
  return length;
}

/* A tar of (path, content) pairs, NULL-terminated. */
static GBytes *
make_tar (const char *const *pairs)
{
  GByteArray *out = g_byte_array_new ();
  struct archive *a = archive_write_new ();

  archive_write_set_format_pax_restricted (a);
  archive_write_set_bytes_in_last_block (a, 1);
  g_assert_cmpint (archive_write_open (a, out, NULL, append_to_array, NULL), ==, ARCHIVE_OK);
  for (guint i = 0; pairs[i]; i += 2)
    {
      struct archive_entry *e = archive_entry_new ();
      gsize n = strlen (pairs[i + 1]);

      archive_entry_set_pathname (e, pairs[i]);
      archive_entry_set_filetype (e, AE_IFREG);
      archive_entry_set_perm (e, 0644);
      archive_entry_set_size (e, n);
      g_assert_cmpint (archive_write_header (a, e), ==, ARCHIVE_OK);
      g_assert_cmpint (archive_write_data (a, pairs[i + 1], n), ==, (la_ssize_t) n);
      archive_entry_free (e);
    }
  g_assert_cmpint (archive_write_close (a), ==, ARCHIVE_OK);
  archive_write_free (a);
  return g_byte_array_free_to_bytes (out);
}

static void
layout_write_tar (Layout *l, const char *file)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  struct archive *a = archive_write_new ();

  archive_write_set_format_pax_restricted (a);
  archive_write_set_bytes_in_last_block (a, 1);
  g_assert_cmpint (archive_write_open (a, out, NULL, append_to_array, NULL), ==, ARCHIVE_OK);
  for (guint i = 0; i < l->paths->len; i++)
    {
      GBytes *bytes = g_hash_table_lookup (l->files, l->paths->pdata[i]);
      struct archive_entry *e = archive_entry_new ();
      gsize n;
      const void *data = g_bytes_get_data (bytes, &n);

      archive_entry_set_pathname (e, l->paths->pdata[i]);
      archive_entry_set_filetype (e, AE_IFREG);
      archive_entry_set_perm (e, 0644);
      archive_entry_set_size (e, n);
      g_assert_cmpint (archive_write_header (a, e), ==, ARCHIVE_OK);
      if (n)
        g_assert_cmpint (archive_write_data (a, data, n), ==, (la_ssize_t) n);
      archive_entry_free (e);
    }
  g_assert_cmpint (archive_write_close (a), ==, ARCHIVE_OK);
  archive_write_free (a);
  g_assert_true (g_file_set_contents (file, (const char *) out->data, out->len, NULL));
}

static GBytes *
compress (GBytes *plain, AirlockLayerCompression compression)
{
  gsize size;
  const void *data = g_bytes_get_data (plain, &size);

  if (compression == AIRLOCK_LAYER_GZIP)
    {
      g_autoptr (GZlibCompressor) gz = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
      g_autoptr (GInputStream) in = g_memory_input_stream_new_from_bytes (plain);
      g_autoptr (GInputStream) conv = g_converter_input_stream_new (in, G_CONVERTER (gz));
      g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();

      g_assert_cmpint (g_output_stream_splice (out, conv, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL,
                                               NULL), >, 0);
      return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
    }
  if (compression == AIRLOCK_LAYER_ZSTD)
    {
      gsize bound = ZSTD_compressBound (size);
      guint8 *out = g_malloc (bound);
      gsize n = ZSTD_compress (out, bound, data, size, 3);

      g_assert_false (ZSTD_isError (n));
      return g_bytes_new_take (out, n);
    }
  return g_bytes_ref (plain);
}

/* One single-arch image written into @l: a layer holding /hello (its
 * content names the arch), a config, a manifest. */
typedef struct {
  char *manifest_digest;
  gsize manifest_size;
  char *config_digest;
  char *layer_digest;
  char *hello;                /* the content of /hello */
} Built;

static void
built_clear (Built *b)
{
  g_free (b->manifest_digest);
  g_free (b->config_digest);
  g_free (b->layer_digest);
  g_free (b->hello);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Built, built_clear)

typedef struct {
  const char *arch;
  const char *variant;
  AirlockLayerCompression compression;
  const char *layer_media_type;   /* NULL: the one for the compression */
  const char *config_arch;        /* NULL: arch */
  const char *manifest_text;      /* instead of the manifest built here */
  const char *user;               /* the config's User, as JSON text; NULL: nobody:nogroup */
  const char *cmd_member;         /* instead of the config's "Cmd":["cat /hello"] */
  GBytes *layer;                  /* the stored layer (in @compression), instead of /hello's */
} ImageSpec;

static void
add_image (Layout *l, const ImageSpec *spec, Built *ret)
{
  const char *pairs[] = { "hello", NULL, "etc/passwd", "root:x:0:0::/root:/bin/sh\n", NULL };
  g_autofree char *hello = g_strdup_printf ("hello from %s\n", spec->arch);
  g_autoptr (GBytes) plain = NULL;
  g_autoptr (GBytes) stored = NULL;
  g_autofree char *diff_id = NULL;
  g_autofree char *config = NULL;
  g_autofree char *manifest = NULL;
  g_autofree char *variant = NULL;
  const char *mt = spec->layer_media_type;

  pairs[1] = hello;
  plain = make_tar (pairs);
  /* An OCI image's diff_ids are not checked (its layers are named by
   * their stored digest): any will do for a given layer. */
  stored = spec->layer ? g_bytes_ref (spec->layer) : compress (plain, spec->compression);
  diff_id = sha256_of (plain);
  if (!mt)
    mt = spec->compression == AIRLOCK_LAYER_GZIP   ? MT_LAYER_GZIP
         : spec->compression == AIRLOCK_LAYER_ZSTD ? MT_LAYER_ZSTD
                                                   : MT_LAYER;
  ret->layer_digest = layout_blob (l, stored);
  variant = spec->variant ? g_strdup_printf (",\"variant\":\"%s\"", spec->variant) : g_strdup ("");
  config = g_strdup_printf (
    "{\"architecture\":\"%s\",\"os\":\"linux\"%s,"
    "\"config\":{\"Entrypoint\":[\"/bin/sh\",\"-c\"],%s,"
    "\"Env\":[\"PATH=/usr/bin:/bin\",\"ARCH=%s\"],\"WorkingDir\":\"/srv\",\"User\":\"%s\"},"
    "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:%s\"]}}",
    spec->config_arch ? spec->config_arch : spec->arch, variant,
    spec->cmd_member ? spec->cmd_member : "\"Cmd\":[\"cat /hello\"]", spec->arch,
    spec->user ? spec->user : "nobody:nogroup", diff_id);
  ret->config_digest = layout_blob_text (l, config);
  manifest = spec->manifest_text
               ? g_strdup (spec->manifest_text)
               : g_strdup_printf ("{\"schemaVersion\":2,\"mediaType\":\"" MT_MANIFEST "\","
                                  "\"config\":{\"mediaType\":\"" MT_CONFIG "\",\"digest\":\"%s\",\"size\":%zu},"
                                  "\"layers\":[{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}]}",
                                  ret->config_digest, strlen (config), mt, ret->layer_digest,
                                  g_bytes_get_size (stored));
  ret->manifest_digest = layout_blob_text (l, manifest);
  ret->manifest_size = strlen (manifest);
  ret->hello = g_steal_pointer (&hello);
}

/* An index entry.  @arch NULL: no platform; @tag NULL: no ref.name. */
static char *
descriptor (const char *media_type, const char *digest, gsize size, const char *arch,
            const char *variant, const char *tag)
{
  g_autofree char *platform = NULL;
  g_autofree char *annotations = NULL;

  if (arch)
    platform = g_strdup_printf (",\"platform\":{\"architecture\":\"%s\",\"os\":\"linux\"%s%s%s}",
                                arch, variant ? ",\"variant\":\"" : "", variant ? variant : "",
                                variant ? "\"" : "");
  if (tag)
    annotations = g_strdup_printf (",\"annotations\":{\"org.opencontainers.image.ref.name\":\"%s\"}",
                                   tag);
  return g_strdup_printf ("{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu%s%s}", media_type,
                          digest, size, platform ? platform : "", annotations ? annotations : "");
}

static char *
index_of (const char *const *entries)
{
  g_autofree char *list = g_strjoinv (",", (char **) entries);
  return g_strdup_printf ("{\"schemaVersion\":2,\"mediaType\":\"" MT_INDEX "\",\"manifests\":[%s]}",
                          list);
}

static void
layout_set_index (Layout *l, const char *const *entries)
{
  g_autofree char *index = index_of (entries);

  layout_put_text (l, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
  layout_put_text (l, "index.json", index);
}

typedef struct {
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = g_dir_make_tmp ("airlock-test-image-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  airlock_rm_rf (f->dir);
  g_assert_false (g_file_test (f->dir, G_FILE_TEST_EXISTS));
  g_free (f->dir);
}

/* Writes @l as an OCI layout directory; returns "oci:DIR". */
static char *
write_oci (Fixture *f, Layout *l, const char *name)
{
  g_autofree char *dir = g_build_filename (f->dir, name, NULL);

  layout_write_dir (l, dir);
  return g_strconcat ("oci:", dir, NULL);
}

static char *
write_oci_archive (Fixture *f, Layout *l, const char *name)
{
  g_autofree char *file = g_build_filename (f->dir, name, NULL);

  layout_write_tar (l, file);
  return g_strconcat ("oci-archive:", file, NULL);
}

/* The whole layer stream, or NULL with @error. */
static GBytes *
read_layer (AirlockImageSource *source, const AirlockImageLayer *layer, GError **error)
{
  g_autoptr (GInputStream) stream = airlock_image_open_layer (source, layer, error);
  g_autoptr (GOutputStream) out = NULL;

  if (!stream)
    return NULL;
  out = g_memory_output_stream_new_resizable ();
  if (g_output_stream_splice (out, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, error) < 0)
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

/* The content of @path in a plain tar. */
static char *
tar_file (GBytes *tar, const char *path)
{
  struct archive *a = archive_read_new ();
  struct archive_entry *e;
  char *found = NULL;
  gsize size;
  const void *data = g_bytes_get_data (tar, &size);

  archive_read_support_format_tar (a);
  g_assert_cmpint (archive_read_open_memory (a, data, size), ==, ARCHIVE_OK);
  while (!found && archive_read_next_header (a, &e) == ARCHIVE_OK)
    if (g_str_equal (archive_entry_pathname (e), path))
      {
        gsize n = archive_entry_size (e);
        found = g_malloc0 (n + 1);
        g_assert_cmpint (archive_read_data (a, found, n), ==, (la_ssize_t) n);
      }
  archive_read_free (a);
  return found;
}

/* The error names the image and the blob (a digest or a path). */
static void
assert_error_names (const GError *error, int code, const char *reference, const char *blob)
{
  g_assert_nonnull (error);
  g_test_message ("error: %s", error->message);
  g_assert_error ((GError *) error, AIRLOCK_IMAGE_ERROR, code);
  g_assert_nonnull (strstr (error->message, reference));
  if (blob)
    g_assert_nonnull (strstr (error->message, g_str_has_prefix (blob, "sha256:") ? blob + 7 : blob));
}

static void
check_image (AirlockImageSource *source, AirlockArch arch, const Built *built,
             AirlockLayerCompression compression)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImage) image = airlock_image_resolve (source, arch, &error);
  g_autoptr (GBytes) tar = NULL;
  g_autofree char *hello = NULL;
  AirlockImageLayer *layer;

  g_assert_no_error (error);
  g_assert_cmpint (image->arch, ==, arch);
  g_assert_cmpstr (image->manifest_digest, ==, built->manifest_digest);
  g_assert_cmpstr (image->config_digest, ==, built->config_digest);
  g_assert_cmpuint (image->layers->len, ==, 1);
  layer = image->layers->pdata[0];
  g_assert_cmpstr (layer->digest, ==, built->layer_digest);
  g_assert_cmpint (layer->compression, ==, compression);
  g_assert_cmpstr (image->entrypoint[0], ==, "/bin/sh");
  g_assert_cmpstr (image->entrypoint[1], ==, "-c");
  g_assert_cmpstr (image->cmd[0], ==, "cat /hello");
  g_assert_cmpstr (image->env[1], ==, arch == AIRLOCK_ARCH_AMD64 ? "ARCH=amd64" : "ARCH=arm64");
  g_assert_cmpstr (image->working_dir, ==, "/srv");
  g_assert_cmpstr (image->user, ==, "nobody:nogroup");
  tar = read_layer (source, layer, &error);
  g_assert_no_error (error);
  hello = tar_file (tar, "hello");
  g_assert_cmpstr (hello, ==, built->hello);
}

/* ---- layouts ------------------------------------------------------------ */

static void
test_oci_single_arch (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_PLAIN };
  g_autofree char *entry = NULL;
  g_autofree char *ref = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) arches = NULL;
  g_autoptr (GPtrArray) others = NULL;

  add_image (l, &spec, &b);
  /* No platform in the index: the config says which arch it is. */
  entry = descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size, NULL, NULL, "latest");
  layout_set_index (l, (const char *[]) { entry, NULL });
  ref = write_oci (f, l, "img");

  source = airlock_image_source_open (ref, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (airlock_image_source_get_reference (source), ==, ref);
  arches = airlock_image_source_list_arches (source, &others, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (arches->len, ==, 1);
  g_assert_cmpint (g_array_index (arches, AirlockArch, 0), ==, AIRLOCK_ARCH_AMD64);
  g_assert_cmpuint (others->len, ==, 0);
  check_image (source, AIRLOCK_ARCH_AMD64, &b, AIRLOCK_LAYER_PLAIN);

  /* With the command's --cache-dir (airlock_image_source_open_cached): a
   * local reference is read in place, the cache directory never used. */
  {
    g_autoptr (AirlockImageSource) cached
        = airlock_image_source_open_cached (ref, "/nonexistent/airlock-cache", &error);

    g_assert_no_error (error);
    g_assert_cmpstr (airlock_image_source_get_reference (cached), ==, ref);
    check_image (cached, AIRLOCK_ARCH_AMD64, &b, AIRLOCK_LAYER_PLAIN);
    g_assert_false (g_file_test ("/nonexistent/airlock-cache", G_FILE_TEST_EXISTS));
  }

  /* A single-arch image only serves its arch. */
  image = airlock_image_resolve (source, AIRLOCK_ARCH_ARM64, &error);
  g_assert_null (image);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NO_ARCH, ref, "index.json");
  g_assert_nonnull (strstr (error->message, "linux/arm64"));
}

/* Builds the multi-arch layout: index.json → an index blob → amd64 (gzip),
 * arm64 (zstd, @arm_variant), s390x. */
static char *
multi_arch_layout (Layout *l, const char *arm_variant, Built *amd, Built *arm)
{
  ImageSpec amd_spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP };
  ImageSpec arm_spec = { .arch = "arm64", .variant = arm_variant,
                         .compression = AIRLOCK_LAYER_ZSTD };
  g_autofree char *e1 = NULL, *e2 = NULL, *e3 = NULL, *top = NULL, *index = NULL;
  char *index_digest;

  add_image (l, &amd_spec, amd);
  add_image (l, &arm_spec, arm);
  e1 = descriptor (MT_MANIFEST, amd->manifest_digest, amd->manifest_size, "amd64", NULL, NULL);
  e2 = descriptor (MT_MANIFEST, arm->manifest_digest, arm->manifest_size, "arm64", arm_variant, NULL);
  /* A platform airlock does not run, pointing at a blob never read. */
  e3 = descriptor (MT_MANIFEST, "sha256:0000000000000000000000000000000000000000000000000000000000000000",
                   10, "s390x", NULL, NULL);
  index = index_of ((const char *[]) { e1, e2, e3, NULL });
  index_digest = layout_blob_text (l, index);
  top = descriptor (MT_INDEX, index_digest, strlen (index), NULL, NULL, "latest");
  layout_set_index (l, (const char *[]) { top, NULL });
  return index_digest;
}

static void
check_multi_arch (const char *ref, const char *index_digest, const Built *amd, const Built *arm,
                  const char *arm_platform)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = airlock_image_source_open (ref, &error);
  g_autoptr (GArray) arches = NULL;
  g_autoptr (GPtrArray) others = NULL;
  g_autoptr (AirlockImage) image = NULL;

  g_assert_no_error (error);
  arches = airlock_image_source_list_arches (source, &others, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (arches->len, ==, 2);
  g_assert_cmpint (g_array_index (arches, AirlockArch, 0), ==, AIRLOCK_ARCH_AMD64);
  g_assert_cmpint (g_array_index (arches, AirlockArch, 1), ==, AIRLOCK_ARCH_ARM64);
  g_assert_cmpuint (others->len, ==, 1);
  g_assert_cmpstr (others->pdata[0], ==, "linux/s390x");
  check_image (source, AIRLOCK_ARCH_AMD64, amd, AIRLOCK_LAYER_GZIP);
  check_image (source, AIRLOCK_ARCH_ARM64, arm, AIRLOCK_LAYER_ZSTD);
  image = airlock_image_resolve (source, AIRLOCK_ARCH_ARM64, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (image->index_digest, ==, index_digest);
  g_assert_cmpstr (image->platform, ==, arm_platform);
}

/* One multi-arch resolution: the layout written by @write (under @name),
 * its arm64 manifest's platform variant @arm_variant (NULL: none), so the
 * platform resolved for arm64 is @arm_platform; @tagged: the reference
 * with ":latest" resolves the same. */
typedef struct {
  char *(*write) (Fixture *f, Layout *l, const char *name);
  const char *name;
  const char *arm_variant;
  const char *arm_platform;
  gboolean tagged;
} MultiArchCase;

static const MultiArchCase oci_multi_arch = {
  write_oci, "img", "v8", "linux/arm64/v8", TRUE,
};
static const MultiArchCase oci_arm64_no_variant = {
  write_oci, "img", NULL, "linux/arm64", FALSE,
};
static const MultiArchCase oci_archive_multi_arch = {
  write_oci_archive, "img.tar", "v8", "linux/arm64/v8", TRUE,
};

static void
test_multi_arch (Fixture *f, gconstpointer data)
{
  const MultiArchCase *c = data;
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) amd = { NULL };
  g_auto (Built) arm = { NULL };
  g_autofree char *index_digest = multi_arch_layout (l, c->arm_variant, &amd, &arm);
  g_autofree char *ref = c->write (f, l, c->name);

  check_multi_arch (ref, index_digest, &amd, &arm, c->arm_platform);
  if (c->tagged)
    {
      g_autofree char *tagged = g_strconcat (ref, ":latest", NULL);

      check_multi_arch (tagged, index_digest, &amd, &arm, c->arm_platform);
    }
}

static void
test_oci_tag_selection (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) a = { NULL };
  g_auto (Built) b = { NULL };
  ImageSpec amd = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP };
  ImageSpec arm = { .arch = "arm64", .compression = AIRLOCK_LAYER_PLAIN };
  g_autofree char *ea = NULL, *eb = NULL, *ref = NULL, *ref_b = NULL, *ref_c = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;

  add_image (l, &amd, &a);
  add_image (l, &arm, &b);
  ea = descriptor (MT_MANIFEST, a.manifest_digest, a.manifest_size, "amd64", NULL, "a");
  eb = descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size, "arm64", NULL, "b");
  layout_set_index (l, (const char *[]) { ea, eb, NULL });
  ref = write_oci (f, l, "img");

  /* Two tags are two images: no guessing. */
  source = airlock_image_source_open (ref, &error);
  g_assert_null (source);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_REFERENCE, ref, "index.json");
  g_assert_nonnull (strstr (error->message, "'b'"));
  g_clear_error (&error);

  ref_b = g_strconcat (ref, ":b", NULL);
  source = airlock_image_source_open (ref_b, &error);
  g_assert_no_error (error);
  check_image (source, AIRLOCK_ARCH_ARM64, &b, AIRLOCK_LAYER_PLAIN);
  g_clear_pointer (&source, airlock_image_source_free);

  ref_c = g_strconcat (ref, ":c", NULL);
  source = airlock_image_source_open (ref_c, &error);
  g_assert_null (source);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NOT_FOUND, ref_c, "index.json");
}

/* docker save: manifest.json, <hex>.json, <id>/layer.tar. */
static char *
docker_layout (Layout *l, const char *config_name_override, char **ret_config_digest,
               char **ret_layer_digest)
{
  const char *pairs[] = { "hello", "hello from docker\n", NULL };
  g_autoptr (GBytes) layer = make_tar (pairs);
  g_autofree char *diff_id = sha256_of (layer);
  g_autofree char *config = g_strdup_printf (
    "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Cmd\":[\"/bin/sh\"],"
    "\"Env\":[\"PATH=/bin\"]},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"sha256:%s\"]}}",
    diff_id);
  g_autofree char *config_hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, config, -1);
  g_autofree char *config_name = config_name_override ? g_strdup (config_name_override)
                                                      : g_strconcat (config_hex, ".json", NULL);
  g_autofree char *manifest = g_strdup_printf (
    "[{\"Config\":\"%s\",\"RepoTags\":[\"sample:latest\"],\"Layers\":[\"0123abcd/layer.tar\"]}]",
    config_name);

  layout_put_text (l, "manifest.json", manifest);
  layout_put_text (l, config_name, config);
  layout_put (l, "0123abcd/layer.tar", layer);
  *ret_config_digest = g_strconcat ("sha256:", config_hex, NULL);
  *ret_layer_digest = g_strconcat ("sha256:", diff_id, NULL);
  return g_strdup ("hello from docker\n");
}

static void
test_docker_archive (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_autofree char *config_digest = NULL, *layer_digest = NULL;
  g_autofree char *hello G_GNUC_UNUSED = docker_layout (l, NULL, &config_digest, &layer_digest);
  g_autofree char *file = g_build_filename (f->dir, "saved.tar", NULL);
  g_autofree char *ref = g_strconcat ("docker-archive:", file, NULL);
  g_autofree char *ref_tag = g_strconcat (ref, ":sample:latest", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (AirlockImage) none = NULL;
  g_autoptr (GBytes) tar = NULL;
  g_autofree char *content = NULL;

  layout_write_tar (l, file);
  source = airlock_image_source_open (ref, &error);
  g_assert_no_error (error);
  image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (image->config_digest, ==, config_digest);
  g_assert_true (g_str_has_prefix (image->manifest_digest, "sha256:"));
  g_assert_null (image->index_digest);
  g_assert_null (image->entrypoint);
  g_assert_cmpstr (image->cmd[0], ==, "/bin/sh");
  g_assert_cmpuint (image->layers->len, ==, 1);
  g_assert_cmpstr (((AirlockImageLayer *) image->layers->pdata[0])->digest, ==, layer_digest);
  tar = read_layer (source, image->layers->pdata[0], &error);
  g_assert_no_error (error);
  content = tar_file (tar, "hello");
  g_assert_cmpstr (content, ==, hello);

  none = airlock_image_resolve (source, AIRLOCK_ARCH_ARM64, &error);
  g_assert_null (none);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NO_ARCH, ref, "manifest.json");
  g_clear_error (&error);
  g_clear_pointer (&source, airlock_image_source_free);

  source = airlock_image_source_open (ref_tag, &error);
  g_assert_no_error (error);
}

static void
test_docker_archive_bad_config_name (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  const char *wrong = "1111111111111111111111111111111111111111111111111111111111111111.json";
  g_autofree char *config_digest = NULL, *layer_digest = NULL;
  g_autofree char *hello G_GNUC_UNUSED = docker_layout (l, wrong, &config_digest, &layer_digest);
  g_autofree char *ref = write_oci_archive (f, l, "saved.tar");
  g_autofree char *docker_ref = g_strconcat ("docker-archive:", ref + strlen ("oci-archive:"), NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = airlock_image_source_open (docker_ref, &error);

  g_assert_null (source);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_DIGEST, docker_ref, wrong);
  g_assert_nonnull (strstr (error->message, config_digest + 7));
}

static void
test_docker_archive_tampered_layer (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_autofree char *config_digest = NULL, *layer_digest = NULL;
  g_autofree char *hello G_GNUC_UNUSED = docker_layout (l, NULL, &config_digest, &layer_digest);
  GBytes *layer = g_hash_table_lookup (l->files, "0123abcd/layer.tar");
  g_autoptr (GBytes) tampered = NULL;
  g_autofree char *ref = NULL;
  g_autofree char *docker_ref = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GBytes) tar = NULL;
  gsize size = g_bytes_get_size (layer);
  guint8 *data_copy = g_memdup2 (g_bytes_get_data (layer, NULL), size);

  data_copy[512] ^= 1;   /* the file's content, after its header */
  tampered = g_bytes_new_take (data_copy, size);
  layout_put (l, "0123abcd/layer.tar", tampered);
  ref = write_oci_archive (f, l, "saved.tar");
  docker_ref = g_strconcat ("docker-archive:", ref + strlen ("oci-archive:"), NULL);
  source = airlock_image_source_open (docker_ref, &error);
  g_assert_no_error (error);
  image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_no_error (error);
  tar = read_layer (source, image->layers->pdata[0], &error);
  g_assert_null (tar);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_DIGEST, docker_ref, layer_digest);
  g_assert_nonnull (strstr (error->message, "0123abcd/layer.tar"));
}

/* ---- bad input ---------------------------------------------------------- */

/* Opens and resolves @ref for amd64, expecting @code. */
static void
expect_resolve_error (const char *ref, int code, const char *blob)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = airlock_image_source_open (ref, &error);
  g_autoptr (AirlockImage) image = NULL;

  if (source)
    image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_null (image);
  assert_error_names (error, code, ref, blob);
}

/* Resolves fine, and reading the layer fails with @code. */
static void
expect_layer_error (const char *ref, int code, const char *blob, gboolean at_first_read)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = airlock_image_source_open (ref, &error);
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GInputStream) stream = NULL;
  char buffer[16];

  g_assert_no_error (error);
  image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_no_error (error);
  stream = airlock_image_open_layer (source, image->layers->pdata[0], &error);
  if (stream && at_first_read)
    g_assert_cmpint (g_input_stream_read (stream, buffer, sizeof buffer, NULL, &error), ==, -1);
  else if (stream)
    {
      g_autoptr (GBytes) all = read_layer (source, image->layers->pdata[0], &error);
      g_assert_null (all);
    }
  assert_error_names (error, code, ref, blob);
}

/* A one-arch image whose index entry says amd64, @size_delta bytes off
 * the manifest's real size, with @manifest_media_type (NULL: OCI). */
static void
single_layout (Layout *l, const ImageSpec *spec, Built *b, gssize size_delta,
               const char *manifest_media_type)
{
  g_autofree char *entry = NULL;

  add_image (l, spec, b);
  entry = descriptor (manifest_media_type ? manifest_media_type : MT_MANIFEST, b->manifest_digest,
                      b->manifest_size + size_delta, "amd64", NULL, NULL);
  layout_set_index (l, (const char *[]) { entry, NULL });
}

static const ImageSpec plain_amd64 = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP };

static void
test_bad_digest_mismatch (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autofree char *ref = NULL;
  g_autofree char *archive_ref = NULL;

  single_layout (l, &plain_amd64, &b, 0, NULL);
  layout_tamper (l, b.config_digest);
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_DIGEST, b.config_digest);
  archive_ref = write_oci_archive (f, l, "img.tar");
  expect_resolve_error (archive_ref, AIRLOCK_IMAGE_ERROR_DIGEST, b.config_digest);
}

static void
test_bad_layer_digest_mismatch (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_PLAIN };
  g_autofree char *ref = NULL;
  g_autofree char *archive_ref = NULL;

  single_layout (l, &spec, &b, 0, NULL);
  layout_tamper (l, b.layer_digest);
  ref = write_oci (f, l, "img");
  expect_layer_error (ref, AIRLOCK_IMAGE_ERROR_DIGEST, b.layer_digest, FALSE);
  archive_ref = write_oci_archive (f, l, "img.tar");
  expect_layer_error (archive_ref, AIRLOCK_IMAGE_ERROR_DIGEST, b.layer_digest, FALSE);
}

static void
test_bad_size_mismatch (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autofree char *ref = NULL;

  single_layout (l, &plain_amd64, &b, 6, NULL);
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_DIGEST, b.manifest_digest);
}

static void
test_bad_layer_size_mismatch (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autofree char *path = NULL;
  g_autofree char *ref = NULL;
  GBytes *layer;
  g_autoptr (GByteArray) longer = g_byte_array_new ();
  g_autoptr (GBytes) longer_bytes = NULL;

  single_layout (l, &plain_amd64, &b, 0, NULL);
  /* Stored bytes longer than the manifest says, same name. */
  path = blob_path (b.layer_digest);
  layer = g_hash_table_lookup (l->files, path);
  g_byte_array_append (longer, g_bytes_get_data (layer, NULL), g_bytes_get_size (layer));
  g_byte_array_append (longer, (const guint8 *) "trailing", 8);
  longer_bytes = g_byte_array_free_to_bytes (g_steal_pointer (&longer));
  layout_put (l, path, longer_bytes);
  ref = write_oci (f, l, "img");
  expect_layer_error (ref, AIRLOCK_IMAGE_ERROR_DIGEST, b.layer_digest, TRUE);
}

static void
test_bad_missing_blob (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autofree char *path = NULL;
  g_autofree char *layer_path = NULL;
  g_autofree char *ref = NULL;
  g_autofree char *archive_ref = NULL;
  g_autoptr (Layout) l2 = layout_new ();
  g_auto (Built) b2 = { NULL };
  g_autofree char *ref2 = NULL;

  single_layout (l, &plain_amd64, &b, 0, NULL);
  path = blob_path (b.config_digest);
  layout_remove (l, path);
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_NOT_FOUND, b.config_digest);
  archive_ref = write_oci_archive (f, l, "img.tar");
  expect_resolve_error (archive_ref, AIRLOCK_IMAGE_ERROR_NOT_FOUND, b.config_digest);

  single_layout (l2, &plain_amd64, &b2, 0, NULL);
  layer_path = blob_path (b2.layer_digest);
  layout_remove (l2, layer_path);
  ref2 = write_oci_archive (f, l2, "img2.tar");
  expect_layer_error (ref2, AIRLOCK_IMAGE_ERROR_NOT_FOUND, b2.layer_digest, TRUE);
}

static void
test_bad_truncated_archive (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autofree char *ref = NULL;
  g_autofree char *file = NULL;
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  /* Put the manifest last, then cut the archive in its middle. */
  single_layout (l, &plain_amd64, &b, 0, NULL);
  path = blob_path (b.manifest_digest);
  {
    GBytes *manifest = g_bytes_ref (g_hash_table_lookup (l->files, path));
    layout_remove (l, path);
    layout_put (l, path, manifest);
    g_bytes_unref (manifest);
  }
  ref = write_oci_archive (f, l, "img.tar");
  file = g_strdup (ref + strlen ("oci-archive:"));
  g_assert_true (g_file_get_contents (file, &contents, &length, NULL));
  /* Drop the end blocks, the padding and half of the manifest's data. */
  g_assert_true (g_file_set_contents (file, contents, length - 1024 - 512 + b.manifest_size / 2,
                                      NULL));
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_MALFORMED, b.manifest_digest);
}

static void
test_bad_malformed_json (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP,
                     .manifest_text = "{\"schemaVersion\":2,\"config\":" };
  g_autofree char *ref = NULL;
  g_autoptr (Layout) top = layout_new ();
  g_autofree char *top_ref = NULL;

  single_layout (l, &spec, &b, 0, NULL);
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_MALFORMED, b.manifest_digest);

  /* index.json itself. */
  layout_put_text (top, "index.json", "{\"schemaVersion\":2,\"manifests\":[");
  top_ref = write_oci (f, top, "top");
  expect_resolve_error (top_ref, AIRLOCK_IMAGE_ERROR_MALFORMED, "index.json");
}

/* @n '[' (unclosed: the depth check refuses before the end). */
static char *
deep_brackets (guint n)
{
  char *text = g_malloc (n + 1);

  memset (text, '[', n);
  text[n] = '\0';
  return text;
}

/* JSON nested past the bound in each document intake parses: refused as
 * over a bound (exit 17), naming the document, where json-glib alone
 * overflowed its stack (100,000 '[' in index.json crashed `images
 * inspect`). */
static void
test_bad_deep_json (Fixture *f, gconstpointer data)
{
  g_autofree char *deep = deep_brackets (100000);
  g_autofree char *deep_manifest = g_strconcat ("{\"schemaVersion\":2,\"config\":", deep, NULL);
  g_autoptr (Layout) top = layout_new ();
  g_autoptr (Layout) l = layout_new ();
  g_autoptr (Layout) docker = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP,
                     .manifest_text = deep_manifest };
  g_autofree char *top_ref = NULL, *ref = NULL, *docker_ref = NULL;
  g_autofree char *docker_file = g_build_filename (f->dir, "deep-docker.tar", NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;

  layout_put_text (top, "index.json", deep);
  top_ref = write_oci (f, top, "deep-index");
  source = airlock_image_source_open (top_ref, &error);
  if (source)
    g_assert_null (airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error));
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_LIMIT, top_ref, "index.json");
  g_assert_nonnull (strstr (error->message, "JSON nested more than 64 levels deep"));
  g_clear_error (&error);
  g_clear_pointer (&source, airlock_image_source_free);

  single_layout (l, &spec, &b, 0, NULL);
  ref = write_oci (f, l, "deep-manifest");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_LIMIT, b.manifest_digest);

  layout_put_text (docker, "manifest.json", deep);
  layout_write_tar (docker, docker_file);
  docker_ref = g_strconcat ("docker-archive:", docker_file, NULL);
  source = airlock_image_source_open (docker_ref, &error);
  if (source)
    g_assert_null (airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error));
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_LIMIT, docker_ref, "manifest.json");
}

/* A layer bomb: a tar holding one file of @zeros zero bytes, compressed
 * as it is written (libarchive's own filters), so neither the plain tar
 * nor the file is ever held whole: 256 MiB of zeros is ~8 KB of zstd. */
static GBytes *
make_bomb (AirlockLayerCompression compression, guint64 zeros)
{
  static const char block[64 * 1024];
  GByteArray *out = g_byte_array_new ();
  struct archive *a = archive_write_new ();
  struct archive_entry *e = archive_entry_new ();

  archive_write_set_format_pax_restricted (a);
  /* No zero padding after the compressed stream: not part of a layer. */
  archive_write_set_bytes_in_last_block (a, 1);
  if (compression == AIRLOCK_LAYER_ZSTD)
    g_assert_cmpint (archive_write_add_filter_zstd (a), ==, ARCHIVE_OK);
  else
    g_assert_cmpint (archive_write_add_filter_gzip (a), ==, ARCHIVE_OK);
  g_assert_cmpint (archive_write_open (a, out, NULL, append_to_array, NULL), ==, ARCHIVE_OK);
  archive_entry_set_pathname (e, "zeros");
  archive_entry_set_filetype (e, AE_IFREG);
  archive_entry_set_perm (e, 0644);
  archive_entry_set_size (e, (la_int64_t) zeros);
  g_assert_cmpint (archive_write_header (a, e), ==, ARCHIVE_OK);
  for (guint64 done = 0; done < zeros; done += sizeof block)
    g_assert_cmpint (archive_write_data (a, block, MIN (sizeof block, zeros - done)), >, 0);
  archive_entry_free (e);
  g_assert_cmpint (archive_write_close (a), ==, ARCHIVE_OK);
  archive_write_free (a);
  return g_byte_array_free_to_bytes (out);
}

/* Files in the image cache other than the build lock: a disk, a build in
 * progress, its record. */
static guint
count_disk_files (const char *cache_dir)
{
  g_autofree char *image_dir = g_build_filename (cache_dir, "image", NULL);
  g_autoptr (GDir) top = g_dir_open (image_dir, 0, NULL);
  const char *key;
  guint n = 0;

  while (top && (key = g_dir_read_name (top)))
    {
      g_autofree char *dir = g_build_filename (image_dir, key, NULL);
      g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
      const char *name;

      while (d && (name = g_dir_read_name (d)))
        if (!g_str_equal (name, ".lock"))
          {
            g_test_message ("left in the cache: %s/%s", key, name);
            n++;
          }
    }
  return n;
}

/* A zstd and a gzip bomb through the real intake: the disk build stops at
 * the image's size bound (LIMIT: exit 17), naming the image and the
 * bound, before the appliance starts or a disk file is left; and the
 * bound is checked as the layer streams, not after: the bomb's blob is
 * followed by garbage, which the stream would report (MALFORMED) had it
 * reached its end. */
static void
test_bad_layer_bomb (Fixture *f, gconstpointer data)
{
  static const AirlockLayerCompression kinds[] = { AIRLOCK_LAYER_ZSTD, AIRLOCK_LAYER_GZIP };
  g_autofree char *cache = g_build_filename (f->dir, "cache", NULL);

  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      g_autoptr (GBytes) bomb = make_bomb (kinds[k], kinds[k] == AIRLOCK_LAYER_ZSTD ? 256u << 20 : 64u << 20);
      g_autoptr (GByteArray) spoilt = g_byte_array_new ();
      g_autoptr (GBytes) stored = NULL;
      g_autoptr (Layout) l = layout_new ();
      g_auto (Built) b = { NULL };
      ImageSpec spec = { .arch = "amd64", .compression = kinds[k] };
      g_autofree char *name = g_strdup_printf ("bomb-%s", airlock_layer_compression_to_string (kinds[k]));
      g_autofree char *ref = NULL;
      g_autoptr (GError) error = NULL;
      g_autoptr (AirlockImageSource) source = NULL;
      g_autoptr (AirlockImage) image = NULL;
      AirlockImageDiskOptions options = { .cache_dir = cache, .max_image_bytes = 8u << 20 };
      g_autofree char *disk = NULL;

      g_test_message ("%s bomb: %" G_GSIZE_FORMAT " bytes stored", name, g_bytes_get_size (bomb));
      g_assert_cmpuint (g_bytes_get_size (bomb), <, 1u << 20);
      g_byte_array_append (spoilt, g_bytes_get_data (bomb, NULL), g_bytes_get_size (bomb));
      g_byte_array_append (spoilt, (const guint8 *) "not compressed data at all", 26);
      stored = g_byte_array_free_to_bytes (g_steal_pointer (&spoilt));
      spec.layer = stored;
      single_layout (l, &spec, &b, 0, NULL);
      ref = write_oci (f, l, name);
      source = airlock_image_source_open (ref, &error);
      g_assert_no_error (error);
      image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
      g_assert_no_error (error);

      disk = airlock_image_disk_ensure (source, image, &options, &error);
      g_assert_null (disk);
      assert_error_names (error, AIRLOCK_IMAGE_ERROR_LIMIT, ref, b.layer_digest);
      g_assert_nonnull (strstr (error->message, "decompress to more than 8.0\u00a0MiB (8388608 bytes)"));
      g_assert_nonnull (strstr (error->message, "(8388608 bytes), the bound on one image's size"));
      g_assert_cmpuint (count_disk_files (cache), ==, 0);
      g_clear_error (&error);

      /* The control: the same layer, unbounded, is read to its end,
       * where the garbage fails it otherwise. */
      {
        g_autoptr (AirlockRootfsModel) model = airlock_rootfs_model_new ();
        g_autoptr (GInputStream) stream = airlock_image_open_layer (source, image->layers->pdata[0], &error);
        g_autoptr (AirlockLayerPlan) plan = NULL;

        g_assert_no_error (error);
        plan = airlock_layer_scan (stream, 0, model, 0, 0, "unbounded", &error);
        g_assert_null (plan);
        g_test_message ("unbounded: %s", error->message);
        g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED);
      }
    }
}

/* The bound counts every layer together, and the default takes an image
 * of ordinary size; AIRLOCK_MAX_IMAGE_SIZE sets it when the caller does
 * not, and a wrong value there is refused (not a bound crossed). */
static void
test_bad_layers_over_bound_together (Fixture *f, gconstpointer data)
{
  g_autoptr (GBytes) mib = make_bomb (AIRLOCK_LAYER_ZSTD, 3u << 20);
  g_autoptr (GError) error = NULL;
  guint64 bytes = 0;

  g_assert_true (airlock_image_parse_size ("8G", &bytes, NULL));
  g_assert_cmpuint (bytes, ==, G_GUINT64_CONSTANT (8) << 30);
  g_assert_true (airlock_image_parse_size ("512MiB", &bytes, NULL));
  g_assert_cmpuint (bytes, ==, 512u << 20);
  g_assert_true (airlock_image_parse_size ("1000", &bytes, NULL));
  g_assert_cmpuint (bytes, ==, 1000);
  g_assert_true (airlock_image_parse_size ("4k", &bytes, NULL));
  g_assert_cmpuint (bytes, ==, 4096);
  for (guint i = 0; i < 6; i++)
    {
      static const char *const bad[] = { "0", "", "8X", "-1", "99999999999T", "1.5G" };

      g_assert_false (airlock_image_parse_size (bad[i], &bytes, &error));
      g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_clear_error (&error);
    }

  /* Two layers of 3 MiB: under a 4 MiB bound each, over it together. */
  {
    g_autoptr (AirlockRootfsModel) model = airlock_rootfs_model_new ();
    g_autoptr (GInputStream) raw1 = g_memory_input_stream_new_from_bytes (mib);
    g_autoptr (GInputStream) raw2 = g_memory_input_stream_new_from_bytes (mib);
    g_autofree char *hex = sha256_of (mib);
    g_autoptr (GInputStream) s1 = airlock_layer_stream_new (g_object_ref (raw1), g_bytes_get_size (mib), hex,
                                                            AIRLOCK_LAYER_ZSTD, "layer 1");
    g_autoptr (GInputStream) s2 = airlock_layer_stream_new (g_object_ref (raw2), g_bytes_get_size (mib), hex,
                                                            AIRLOCK_LAYER_ZSTD, "layer 2");
    g_autoptr (AirlockLayerPlan) p1 = airlock_layer_scan (s1, 0, model, 0, 4u << 20, "image 'x' layer 1", &error);
    g_autoptr (AirlockLayerPlan) p2 = NULL;

    g_assert_no_error (error);
    g_assert_cmpuint (airlock_layer_plan_get_tar_bytes (p1), >, 3u << 20);
    p2 = airlock_layer_scan (s2, 1, model, airlock_layer_plan_get_tar_bytes (p1), 4u << 20,
                             "image 'x' layer 2", &error);
    g_assert_null (p2);
    g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT);
    g_assert_true (g_str_has_prefix (error->message, "image 'x' layer 2: the image's layers decompress"));
    g_clear_error (&error);
  }

  /* The environment, when the caller leaves the bound at 0. */
  {
    g_autoptr (Layout) l = layout_new ();
    g_auto (Built) b = { NULL };
    ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_ZSTD, .layer = mib };
    g_autofree char *ref = NULL;
    g_autofree char *cache = g_build_filename (f->dir, "cache", NULL);
    g_autoptr (AirlockImageSource) source = NULL;
    g_autoptr (AirlockImage) image = NULL;
    AirlockImageDiskOptions options = { .cache_dir = cache };
    g_autofree char *disk = NULL;

    single_layout (l, &spec, &b, 0, NULL);
    ref = write_oci (f, l, "env-bound");
    source = airlock_image_source_open (ref, &error);
    g_assert_no_error (error);
    image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
    g_assert_no_error (error);

    g_setenv ("AIRLOCK_MAX_IMAGE_SIZE", "2M", TRUE);
    disk = airlock_image_disk_ensure (source, image, &options, &error);
    g_assert_null (disk);
    assert_error_names (error, AIRLOCK_IMAGE_ERROR_LIMIT, ref, b.layer_digest);
    g_assert_nonnull (strstr (error->message, "(2097152 bytes)"));
    g_clear_error (&error);

    g_setenv ("AIRLOCK_MAX_IMAGE_SIZE", "lots", TRUE);
    disk = airlock_image_disk_ensure (source, image, &options, &error);
    g_unsetenv ("AIRLOCK_MAX_IMAGE_SIZE");
    g_assert_null (disk);
    g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
    g_assert_true (g_str_has_prefix (error->message, "AIRLOCK_MAX_IMAGE_SIZE: 'lots' is not a size"));
    g_assert_cmpuint (count_disk_files (cache), ==, 0);
  }
}

static void
test_bad_unknown_media_types (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l1 = layout_new ();
  g_autoptr (Layout) l2 = layout_new ();
  g_autoptr (Layout) l3 = layout_new ();
  g_autoptr (Layout) l4 = layout_new ();
  g_auto (Built) b1 = { NULL };
  g_auto (Built) b2 = { NULL };
  g_auto (Built) b3 = { NULL };
  g_auto (Built) b4 = { NULL };
  ImageSpec odd_layer = { .arch = "amd64", .layer_media_type = "application/vnd.example.layer.v1+squashfs" };
  g_autofree char *ref1 = NULL, *ref2 = NULL, *ref3 = NULL, *ref4 = NULL;
  g_autofree char *manifest = NULL;
  g_autofree char *entry = NULL;
  g_autofree char *config_digest = NULL;
  g_autofree char *manifest_digest = NULL;

  /* A layer type. */
  single_layout (l1, &odd_layer, &b1, 0, NULL);
  ref1 = write_oci (f, l1, "img1");
  expect_resolve_error (ref1, AIRLOCK_IMAGE_ERROR_UNSUPPORTED, b1.layer_digest);

  /* A manifest type. */
  single_layout (l2, &plain_amd64, &b2, 0, "application/vnd.example.manifest.v9+json");
  ref2 = write_oci (f, l2, "img2");
  expect_resolve_error (ref2, AIRLOCK_IMAGE_ERROR_UNSUPPORTED, b2.manifest_digest);

  /* A config type (an artifact, not an image). */
  add_image (l3, &plain_amd64, &b3);
  config_digest = layout_blob_text (l3, "{}");
  manifest = g_strdup_printf ("{\"schemaVersion\":2,\"mediaType\":\"" MT_MANIFEST "\","
                              "\"config\":{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json\","
                              "\"digest\":\"%s\",\"size\":2},\"layers\":[]}", config_digest);
  manifest_digest = layout_blob_text (l3, manifest);
  entry = descriptor (MT_MANIFEST, manifest_digest, strlen (manifest), "amd64", NULL, NULL);
  layout_set_index (l3, (const char *[]) { entry, NULL });
  ref3 = write_oci (f, l3, "img3");
  expect_resolve_error (ref3, AIRLOCK_IMAGE_ERROR_UNSUPPORTED, manifest_digest);

  /* A digest algorithm. */
  add_image (l4, &plain_amd64, &b4);
  g_clear_pointer (&entry, g_free);
  entry = descriptor (MT_MANIFEST, "sha512:00", 2, "amd64", NULL, NULL);
  layout_set_index (l4, (const char *[]) { entry, NULL });
  ref4 = write_oci (f, l4, "img4");
  expect_resolve_error (ref4, AIRLOCK_IMAGE_ERROR_UNSUPPORTED, "sha512:00");
}

static void
test_bad_no_arch (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec arm = { .arch = "arm64", .variant = "v8", .compression = AIRLOCK_LAYER_GZIP };
  g_autofree char *e = NULL, *index = NULL, *index_digest = NULL, *top = NULL, *ref = NULL;

  add_image (l, &arm, &b);
  e = descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size, "arm64", "v8", NULL);
  index = index_of ((const char *[]) { e, NULL });
  index_digest = layout_blob_text (l, index);
  top = descriptor (MT_INDEX, index_digest, strlen (index), NULL, NULL, NULL);
  layout_set_index (l, (const char *[]) { top, NULL });
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_NO_ARCH, index_digest);
}

static void
test_bad_config_arch_lies (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .config_arch = "arm64", .compression = AIRLOCK_LAYER_GZIP };
  g_autofree char *ref = NULL;

  single_layout (l, &spec, &b, 0, NULL);
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_MALFORMED, b.config_digest);
}

/* The config's command lists (Entrypoint, Cmd, Env) as they are read:
 * absent or null is unset, and anything but a list of strings refuses the
 * image rather than running part of what it said. */
typedef struct {
  const char *path;
  const char *cmd_member;
  gboolean malformed;
  int n_cmd;                  /* -1: unset */
} ConfigListRow;

static const ConfigListRow config_list_rows[] = {
  { "/image/config/cmd/list", "\"Cmd\":[\"sh\",\"-c\"]", FALSE, 2 },
  { "/image/config/cmd/empty-list", "\"Cmd\":[]", FALSE, 0 },
  { "/image/config/cmd/null-is-unset", "\"Cmd\":null", FALSE, -1 },
  { "/image/config/cmd/absent-is-unset", "\"Hostname\":\"\"", FALSE, -1 },
  { "/image/config/cmd/bad/element-not-a-string", "\"Cmd\":[\"sh\",1]", TRUE, 0 },
  { "/image/config/cmd/bad/string-not-a-list", "\"Cmd\":\"sh\"", TRUE, 0 },
  { "/image/config/cmd/bad/object-not-a-list", "\"Cmd\":{}", TRUE, 0 },
};

/* The config's StopSignal as Docker reads it (a number, or a name with or
 * without SIG in any case, RTMIN+N and RTMAX-N), the signal a time limit
 * sends the workload first; one Docker would refuse refuses the image. */
typedef struct {
  const char *path;
  const char *member;
  int stop_signal;            /* -1: malformed */
} StopSignalRow;

static const StopSignalRow stop_signal_rows[] = {
  { "/image/config/stop-signal/absent", "\"Cmd\":[\"x\"]", 0 },
  { "/image/config/stop-signal/empty-is-unset", "\"StopSignal\":\"\"", 0 },
  { "/image/config/stop-signal/name", "\"StopSignal\":\"SIGQUIT\"", 3 },
  { "/image/config/stop-signal/without-sig", "\"StopSignal\":\"USR1\"", 10 },
  { "/image/config/stop-signal/lower-case", "\"StopSignal\":\"sigwinch\"", 28 },
  { "/image/config/stop-signal/number", "\"StopSignal\":\"9\"", 9 },
  { "/image/config/stop-signal/rtmin-plus", "\"StopSignal\":\"SIGRTMIN+3\"", 37 },
  { "/image/config/stop-signal/rtmax-minus", "\"StopSignal\":\"RTMAX-1\"", 63 },
  { "/image/config/stop-signal/bad/unknown-name", "\"StopSignal\":\"SIGFOO\"", -1 },
  { "/image/config/stop-signal/bad/zero", "\"StopSignal\":\"0\"", -1 },
  { "/image/config/stop-signal/bad/too-high", "\"StopSignal\":\"65\"", -1 },
  { "/image/config/stop-signal/bad/rtmin-too-far", "\"StopSignal\":\"RTMIN+16\"", -1 },
  { "/image/config/stop-signal/bad/trailing", "\"StopSignal\":\"TERM \"", -1 },
};

/* Resolves an amd64 image whose config has @member instead of its Cmd:
 * the image, or, when @malformed, NULL once the refusal is checked
 * (malformed, naming @needle, or the config's digest when NULL). */
static AirlockImage *
resolve_with_member (Fixture *f, const char *member, gboolean malformed, const char *needle)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP, .cmd_member = member };
  g_autofree char *ref = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  AirlockImage *image;

  single_layout (l, &spec, &b, 0, NULL);
  ref = write_oci (f, l, "img");
  if (malformed)
    {
      expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_MALFORMED, needle ? needle : b.config_digest);
      return NULL;
    }
  source = airlock_image_source_open (ref, &error);
  g_assert_no_error (error);
  image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_no_error (error);
  return image;
}

static void
test_config_stop_signal (Fixture *f, gconstpointer data)
{
  const StopSignalRow *row = data;
  g_autoptr (AirlockImage) image = resolve_with_member (f, row->member, row->stop_signal < 0,
                                                         "StopSignal");

  if (image)
    g_assert_cmpint (image->stop_signal, ==, row->stop_signal);
}

static void
test_config_list (Fixture *f, gconstpointer data)
{
  const ConfigListRow *row = data;
  g_autoptr (AirlockImage) image = resolve_with_member (f, row->cmd_member, row->malformed, NULL);

  if (!image)
    return;
  if (row->n_cmd < 0)
    g_assert_null (image->cmd);
  else
    g_assert_cmpuint (g_strv_length (image->cmd), ==, row->n_cmd);
  g_assert_cmpstr (image->entrypoint[0], ==, "/bin/sh");
}

static void
test_bad_not_gzip (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_PLAIN,
                     .layer_media_type = MT_LAYER_GZIP };
  g_autoptr (Layout) lz = layout_new ();
  g_auto (Built) bz = { NULL };
  ImageSpec zspec = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP,
                      .layer_media_type = MT_LAYER_ZSTD };
  g_autofree char *ref = NULL;
  g_autofree char *refz = NULL;

  single_layout (l, &spec, &b, 0, NULL);
  ref = write_oci (f, l, "img");
  expect_layer_error (ref, AIRLOCK_IMAGE_ERROR_MALFORMED, b.layer_digest, TRUE);

  single_layout (lz, &zspec, &bz, 0, NULL);
  refz = write_oci (f, lz, "imgz");
  expect_layer_error (refz, AIRLOCK_IMAGE_ERROR_MALFORMED, bz.layer_digest, TRUE);
}

static void
test_bad_too_many_layers (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autoptr (GString) manifest = g_string_new (NULL);
  g_autofree char *manifest_digest = NULL;
  g_autofree char *entry = NULL;
  g_autofree char *ref = NULL;
  g_autofree char *config_path = NULL;

  add_image (l, &plain_amd64, &b);
  config_path = blob_path (b.config_digest);
  g_string_append_printf (manifest, "{\"schemaVersion\":2,\"mediaType\":\"" MT_MANIFEST "\","
                          "\"config\":{\"mediaType\":\"" MT_CONFIG "\",\"digest\":\"%s\",\"size\":%zu},"
                          "\"layers\":[",
                          b.config_digest,
                          g_bytes_get_size (g_hash_table_lookup (l->files, config_path)));
  /* One more than the bound, each a real descriptor. */
  for (guint i = 0; i < 1001; i++)
    g_string_append_printf (manifest, "%s{\"mediaType\":\"" MT_LAYER_GZIP "\",\"digest\":\"%s\",\"size\":1}",
                            i ? "," : "", b.layer_digest);
  g_string_append (manifest, "]}");
  manifest_digest = layout_blob_text (l, manifest->str);
  entry = descriptor (MT_MANIFEST, manifest_digest, manifest->len, "amd64", NULL, NULL);
  layout_set_index (l, (const char *[]) { entry, NULL });
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_LIMIT, manifest_digest);
}

/* An index tree whose indexes are each within the bound but whose total
 * is not: 2 entries naming one nested index of 600 (the hostile form is
 * 1000 x 1000 x … four deep, 10^12 visits).  Refused for the total. */
static void
test_bad_index_tree_too_big (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_auto (Built) b = { NULL };
  g_autoptr (GPtrArray) entries = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *nested = NULL;
  g_autofree char *nested_digest = NULL;
  g_autofree char *entry = NULL;
  g_autofree char *ref = NULL;

  add_image (l, &plain_amd64, &b);
  for (guint i = 0; i < 600; i++)
    g_ptr_array_add (entries, descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size,
                                          "amd64", NULL, NULL));
  g_ptr_array_add (entries, NULL);
  nested = index_of ((const char *const *) entries->pdata);
  nested_digest = layout_blob_text (l, nested);
  entry = descriptor (MT_INDEX, nested_digest, strlen (nested), NULL, NULL, NULL);
  layout_set_index (l, (const char *[]) { entry, entry, NULL });
  ref = write_oci (f, l, "img");
  expect_resolve_error (ref, AIRLOCK_IMAGE_ERROR_LIMIT, nested_digest);
}

static void
test_bad_reference (void)
{
  const char *refs[] = { "dir:/nonexistent/airlock-test", "oci:", "oci:/nonexistent/airlock-test", "busybox",
                         "oci-archive:/nonexistent/airlock.tar" };

  for (guint i = 0; i < G_N_ELEMENTS (refs); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (AirlockImageSource) source = airlock_image_source_open (refs[i], &error);

      g_assert_null (source);
      assert_error_names (error, AIRLOCK_IMAGE_ERROR_REFERENCE, refs[i], NULL);
    }
}

/* Plain HTTP is allowed only for these: a name that merely starts like
 * one, or carries more than a numeric port, is a remote registry. */
static void
test_loopback_registry (void)
{
  static const struct {
    const char *reference;
    gboolean loopback;
  } cases[] = {
    { "docker://127.0.0.1:5000/clean:1", TRUE },
    { "docker://127.0.0.1/clean", TRUE },
    { "docker://localhost:41234/a/b@sha256:00", TRUE },
    { "docker://[::1]:5000/clean", TRUE },
    { "docker://[::1]/clean", TRUE },
    { "docker://127.0.0.1.example.com/clean", FALSE },
    { "docker://localhost.example.com:5000/clean", FALSE },
    { "docker://127.0.0.1:5000@example.com/clean", FALSE },
    { "docker://127.0.0.1:/clean", FALSE },
    { "docker://[::1]x/clean", FALSE },
    { "docker://[::1]:5000x/clean", FALSE },
    { "docker://127.0.0.2:5000/clean", FALSE },
    { "docker://localhost", FALSE },          /* Docker Hub's library/localhost */
    { "docker://busybox", FALSE },
    { "containers-storage:127.0.0.1/clean", FALSE },
    { "oci:127.0.0.1/clean", FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].reference);
      g_assert_cmpint (airlock_image_reference_is_loopback_registry (cases[i].reference), ==,
                       cases[i].loopback);
    }
}

/* The copy names the digest inspected, never the tag that may move. */
static void
test_docker_by_digest (void)
{
  static const char *const cases[][2] = {
    { "docker://127.0.0.1:5000/clean:1", "docker://127.0.0.1:5000/clean@sha256:ab" },
    { "docker://127.0.0.1:5000/clean", "docker://127.0.0.1:5000/clean@sha256:ab" },
    { "docker://ghcr.io/o/r:v1@sha256:cd", "docker://ghcr.io/o/r@sha256:ab" },
    { "docker://ghcr.io/o/r@sha256:cd", "docker://ghcr.io/o/r@sha256:ab" },
    { "docker://busybox:1.36", "docker://busybox@sha256:ab" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = airlock_image_docker_by_digest (cases[i][0], "sha256:ab");

      g_assert_cmpstr (got, ==, cases[i][1]);
    }
}

/* A bare path: the transport it needs, when it is an image at all. */
static void
test_bare_path_suggestion (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("airlock-test-image-XXXXXX", NULL);
  g_autofree char *layout = g_build_filename (tmp, "layout", NULL);
  g_autofree char *index = g_build_filename (layout, "index.json", NULL);
  g_autofree char *other = g_build_filename (tmp, "other", NULL);
  g_autofree char *want = g_strdup_printf ("give it as oci:%s", layout);

  g_assert_nonnull (tmp);
  g_assert_cmpint (g_mkdir (layout, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (other, 0700), ==, 0);
  g_assert_true (g_file_set_contents (index, "{}", -1, NULL));
  source = airlock_image_source_open (layout, &error);
  g_assert_null (source);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_REFERENCE, layout, NULL);
  g_assert_nonnull (strstr (error->message, want));
  g_clear_error (&error);
  /* A directory that is no layout gets no suggestion. */
  source = airlock_image_source_open (other, &error);
  g_assert_null (source);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_REFERENCE, other, NULL);
  g_assert_null (strstr (error->message, "give it as"));
  g_remove (index);
  g_rmdir (layout);
  g_rmdir (other);
  g_rmdir (tmp);
}

/* ---- user and command --------------------------------------------------- */

static const char passwd_text[] =
  "root:x:0:0:root:/root:/bin/sh\n"
  "daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n"
  "# a comment\n"
  "broken line\n"
  "app:x:1000:1000::/home/app:/bin/sh\n"
  "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin\n";
static const char group_text[] =
  "root:x:0:\n"
  "daemon:x:1:\n"
  "app:x:1000:\n"
  "audio:x:29:app,other\n"
  "video:x:44:other,app\n"
  "staff:x:50:\n"
  "nogroup:x:65534:\n";

typedef struct {
  const char *user;
  guint32 uid, gid;
  guint32 groups[3];
  guint n_groups;
} UserCase;

static void
test_resolve_user (void)
{
  g_autoptr (GBytes) passwd = g_bytes_new_static (passwd_text, strlen (passwd_text));
  g_autoptr (GBytes) group = g_bytes_new_static (group_text, strlen (group_text));
  const UserCase cases[] = {
    { NULL, 0, 0, { 0 }, 0 },
    { "", 0, 0, { 0 }, 0 },
    { "root", 0, 0, { 0 }, 0 },
    { "app", 1000, 1000, { 29, 44 }, 2 },
    { "1000", 1000, 1000, { 29, 44 }, 2 },
    { "app:staff", 1000, 50, { 0 }, 0 },
    { "app:7", 1000, 7, { 0 }, 0 },
    { "nobody:nogroup", 65534, 65534, { 0 }, 0 },
    { "4242", 4242, 0, { 0 }, 0 },
    { "4242:4343", 4242, 4343, { 0 }, 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) groups = NULL;
      guint32 uid = 99, gid = 99;

      g_test_message ("user '%s'", cases[i].user ? cases[i].user : "(null)");
      g_assert_true (airlock_image_resolve_user (cases[i].user, passwd, group, &uid, &gid, &groups,
                                                 &error));
      g_assert_no_error (error);
      g_assert_cmpuint (uid, ==, cases[i].uid);
      g_assert_cmpuint (gid, ==, cases[i].gid);
      g_assert_cmpuint (groups->len, ==, cases[i].n_groups);
      for (guint j = 0; j < cases[i].n_groups; j++)
        g_assert_cmpuint (g_array_index (groups, guint32, j), ==, cases[i].groups[j]);
    }
}

static void
test_resolve_user_numeric_without_files (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) groups = NULL;
  guint32 uid = 0, gid = 0;

  g_assert_true (airlock_image_resolve_user ("123:456", NULL, NULL, &uid, &gid, &groups, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (uid, ==, 123);
  g_assert_cmpuint (gid, ==, 456);
  g_assert_cmpuint (groups->len, ==, 0);
}

static void
test_resolve_user_errors (void)
{
  g_autoptr (GBytes) passwd = g_bytes_new_static (passwd_text, strlen (passwd_text));
  g_autoptr (GBytes) group = g_bytes_new_static (group_text, strlen (group_text));
  const struct {
    const char *user;
    gboolean with_files;
    const char *mentions;
  } cases[] = {
    { "ghost", TRUE, "'ghost'" },
    { "app:ghosts", TRUE, "'ghosts'" },
    { "app", FALSE, "/etc/passwd" },
    { "1:staff", FALSE, "/etc/group" },
    { "-1", TRUE, "'-1'" },
    { "4294967296", TRUE, "'4294967296'" },
    { "app:", TRUE, "'app:'" },
    { "a:b:c", TRUE, "'a:b:c'" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (GArray) groups = NULL;
      guint32 uid = 99, gid = 99;

      g_assert_false (airlock_image_resolve_user (cases[i].user, cases[i].with_files ? passwd : NULL,
                                                  cases[i].with_files ? group : NULL, &uid, &gid,
                                                  &groups, &error));
      g_test_message ("%s", error->message);
      g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER);
      g_assert_nonnull (strstr (error->message, cases[i].mentions));
      g_assert_cmpuint (uid, ==, 99);
      g_assert_cmpuint (gid, ==, 99);
      g_assert_null (groups);
    }
}

static void
test_command (void)
{
  char *entrypoint[] = { "/bin/sh", "-c", NULL };
  char *cmd[] = { "echo hi", NULL };
  AirlockImage image = { .reference = "oci:x", .platform = "linux/amd64" };
  const char *args[] = { "id", NULL };
  const char *no_args[] = { NULL };
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = NULL;

  /* Entrypoint + Cmd; args replace Cmd. */
  image.entrypoint = entrypoint;
  image.cmd = cmd;
  argv = airlock_image_command (&image, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstrv (argv, ((const char *[]) { "/bin/sh", "-c", "echo hi", NULL }));
  g_clear_pointer (&argv, g_strfreev);
  argv = airlock_image_command (&image, no_args, &error);
  g_assert_cmpstrv (argv, ((const char *[]) { "/bin/sh", "-c", "echo hi", NULL }));
  g_clear_pointer (&argv, g_strfreev);
  argv = airlock_image_command (&image, args, &error);
  g_assert_cmpstrv (argv, ((const char *[]) { "/bin/sh", "-c", "id", NULL }));
  g_clear_pointer (&argv, g_strfreev);

  /* Cmd alone; args alone. */
  image.entrypoint = NULL;
  argv = airlock_image_command (&image, NULL, &error);
  g_assert_cmpstrv (argv, ((const char *[]) { "echo hi", NULL }));
  g_clear_pointer (&argv, g_strfreev);
  image.cmd = NULL;
  argv = airlock_image_command (&image, args, &error);
  g_assert_cmpstrv (argv, ((const char *[]) { "id", NULL }));
  g_clear_pointer (&argv, g_strfreev);

  /* Nothing to run. */
  argv = airlock_image_command (&image, NULL, &error);
  g_assert_null (argv);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NO_COMMAND);
  g_assert_nonnull (strstr (error->message, "oci:x"));
}

/* ---- image strings in messages ------------------------------------------ */

/* A value the image chooses, as JSON text: erase the line, go back to its
 * start, print "pass", start a forged line.  And as a message must show
 * it: g_strescape()'s rendering, one printable line. */
#define HOSTILE_JSON "\\u001b[2K\\rpass\\n"
#define HOSTILE_RAW "\x1b[2K\rpass\n"
#define HOSTILE_SHOWN "\\033[2K\\rpass\\n"
/* Far more than any message needs, far less than the values below. */
#define MESSAGE_MAX 2048

/* @text is what the command prints: valid UTF-8, no control character
 * (so no ESC sequence and no newline), at most @max bytes.  A failure logs
 * it escaped, never as it is. */
static void
assert_printable_text (const char *text, gsize max)
{
  gssize bad = -1;

  g_assert_nonnull (text);
  g_assert_true (g_utf8_validate (text, -1, NULL));
  for (const char *p = text; *p && bad < 0; p++)
    if ((guchar) *p < 0x20 || (guchar) *p == 0x7f)
      bad = p - text;
  if (bad >= 0)
    {
      g_autofree char *escaped = g_strescape (text, NULL);
      g_test_message ("control byte 0x%02x at %" G_GSSIZE_FORMAT " of: %s",
                      (guchar) text[bad], bad, escaped);
    }
  g_assert_cmpint (bad, ==, -1);
  g_assert_cmpuint (strlen (text), <=, max);
}

static void
assert_printable (const GError *error)
{
  g_assert_nonnull (error);
  assert_printable_text (error->message, MESSAGE_MAX);
}

/* Opens @ref and resolves it for amd64, which must fail; the error. */
static GError *
resolve_error (const char *ref)
{
  GError *error = NULL;
  g_autoptr (AirlockImageSource) source = airlock_image_source_open (ref, &error);
  g_autoptr (AirlockImage) image = NULL;

  if (source)
    image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_null (image);
  g_assert_nonnull (error);
  return error;
}

static void
test_hostile_index (Fixture *f, gconstpointer data)
{
  g_auto (Built) b = { NULL };
  g_autoptr (Layout) l = layout_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GString) big = g_string_new ("application/x\\u001b");
  g_autoptr (GPtrArray) tagged = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *e1 = NULL, *e2 = NULL, *ref = NULL, *ref_c = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (GArray) arches = NULL;
  g_autoptr (GPtrArray) others = NULL;

  /* One image, listed by index.json in each way below. */
  add_image (l, &plain_amd64, &b);

  /* A manifest's media type. */
  e1 = descriptor ("application/x" HOSTILE_JSON, b.manifest_digest, b.manifest_size, "amd64",
                   NULL, NULL);
  layout_set_index (l, (const char *[]) { e1, NULL });
  ref = write_oci (f, l, "media-type");
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_UNSUPPORTED, ref, b.manifest_digest);
  g_assert_nonnull (strstr (error->message, "media type 'application/x" HOSTILE_SHOWN "'"));
  g_clear_error (&error);
  g_clear_pointer (&e1, g_free);
  g_clear_pointer (&ref, g_free);

  /* A digest as written, before it is checked. */
  e1 = descriptor (MT_MANIFEST, "sha256:" HOSTILE_JSON, b.manifest_size, "amd64", NULL, NULL);
  layout_set_index (l, (const char *[]) { e1, NULL });
  ref = write_oci (f, l, "digest");
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_MALFORMED, ref, "index.json");
  g_assert_nonnull (strstr (error->message, "digest 'sha256:" HOSTILE_SHOWN "'"));
  g_clear_error (&error);
  g_clear_pointer (&e1, g_free);
  g_clear_pointer (&ref, g_free);

  /* Tags, listed when the reference names none or another. */
  e1 = descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size, "amd64", NULL,
                   "a" HOSTILE_JSON);
  e2 = descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size, "amd64", NULL, "b");
  layout_set_index (l, (const char *[]) { e1, e2, NULL });
  ref = write_oci (f, l, "tags");
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_REFERENCE, ref, "index.json");
  g_assert_nonnull (strstr (error->message, "(tags: 'a" HOSTILE_SHOWN "', 'b')"));
  g_clear_error (&error);
  ref_c = g_strconcat (ref, ":c", NULL);
  error = resolve_error (ref_c);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NOT_FOUND, ref_c, "index.json");
  g_assert_nonnull (strstr (error->message, "(tags: 'a" HOSTILE_SHOWN "', 'b')"));
  g_clear_error (&error);
  g_clear_pointer (&e1, g_free);
  g_clear_pointer (&e2, g_free);
  g_clear_pointer (&ref, g_free);

  /* Platform fields: in the list of other platforms, and in the message
   * that says which platforms there are. */
  e1 = descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size, "amd64" HOSTILE_JSON,
                   "v1" HOSTILE_JSON, NULL);
  layout_set_index (l, (const char *[]) { e1, NULL });
  ref = write_oci (f, l, "platform");
  source = airlock_image_source_open (ref, &error);
  g_assert_no_error (error);
  arches = airlock_image_source_list_arches (source, &others, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (arches->len, ==, 0);
  g_assert_cmpuint (others->len, ==, 1);
  assert_printable_text (others->pdata[0], MESSAGE_MAX);
  g_assert_cmpstr (others->pdata[0], ==, "linux/amd64" HOSTILE_SHOWN "/v1" HOSTILE_SHOWN);
  g_clear_pointer (&source, airlock_image_source_free);
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NO_ARCH, ref, "index.json");
  g_assert_nonnull (strstr (error->message,
                            "(it has linux/amd64" HOSTILE_SHOWN "/v1" HOSTILE_SHOWN ")"));
  g_clear_error (&error);
  g_clear_pointer (&e1, g_free);
  g_clear_pointer (&ref, g_free);

  /* A 1 MiB media type: cut, and the cut said. */
  for (guint i = 0; i < 1024 * 1024; i++)
    g_string_append_c (big, 'A');
  e1 = descriptor (big->str, b.manifest_digest, b.manifest_size, "amd64", NULL, NULL);
  layout_set_index (l, (const char *[]) { e1, NULL });
  ref = write_oci (f, l, "oversize");
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_UNSUPPORTED, ref, b.manifest_digest);
  g_assert_nonnull (strstr (error->message, "media type 'application/x\\033AAAA"));
  /* 13 + ESC + 1 MiB bytes once decoded. */
  g_assert_nonnull (strstr (error->message, "AAAA… (1048590 bytes)' is not"));
  g_clear_error (&error);
  g_clear_pointer (&e1, g_free);
  g_clear_pointer (&ref, g_free);

  /* Many long tags: the list is cut too. */
  for (guint i = 0; i < 200; i++)
    {
      g_autofree char *tag = g_strdup_printf ("tag-" HOSTILE_JSON "-%03u-%0100u", i, 0);
      g_ptr_array_add (tagged, descriptor (MT_MANIFEST, b.manifest_digest, b.manifest_size,
                                           "amd64", NULL, tag));
    }
  g_ptr_array_add (tagged, NULL);
  layout_set_index (l, (const char *const *) tagged->pdata);
  ref = write_oci (f, l, "many-tags");
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_REFERENCE, ref, "index.json");
  g_assert_nonnull (strstr (error->message, "(tags: 'tag-" HOSTILE_SHOWN "-000-000"));
  g_assert_nonnull (strstr (error->message, "…): name one as"));
  g_clear_error (&error);
  g_clear_pointer (&ref, g_free);

  /* index.json that does not parse: json-glib quotes the string it did
   * not expect (here, where a ':' should be), raw. */
  layout_put_text (l, "index.json", "{\"schemaVersion\":2,\"" HOSTILE_RAW "\" 1}");
  ref = write_oci (f, l, "json-token");
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_MALFORMED, ref, "index.json");
  g_assert_nonnull (strstr (error->message, "not valid JSON"));
  g_assert_nonnull (strstr (error->message, HOSTILE_SHOWN));
}

static void
test_hostile_config (Fixture *f, gconstpointer data)
{
  g_autoptr (Layout) l = layout_new ();
  g_autoptr (Layout) lies = layout_new ();
  g_auto (Built) b = { NULL };
  g_auto (Built) b_lies = { NULL };
  ImageSpec spec = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP,
                     .user = "ghost" HOSTILE_JSON ":x" };
  ImageSpec lying = { .arch = "amd64", .compression = AIRLOCK_LAYER_GZIP,
                      .config_arch = "amd64" HOSTILE_JSON };
  g_autoptr (GBytes) passwd = g_bytes_new_static (passwd_text, strlen (passwd_text));
  g_autoptr (GBytes) group = g_bytes_new_static (group_text, strlen (group_text));
  g_autofree char *ref = NULL, *ref_lies = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GString) big = g_string_new ("\x1b");
  guint32 uid = 99, gid = 99;

  /* The User reaches the guest as the image wrote it, and a message
   * escaped. */
  single_layout (l, &spec, &b, 0, NULL);
  ref = write_oci (f, l, "user");
  source = airlock_image_source_open (ref, &error);
  g_assert_no_error (error);
  image = airlock_image_resolve (source, AIRLOCK_ARCH_AMD64, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (image->user, ==, "ghost" HOSTILE_RAW ":x");
  g_assert_false (airlock_image_resolve_user (image->user, passwd, group, &uid, &gid, NULL,
                                              &error));
  assert_printable (error);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_USER);
  g_assert_nonnull (strstr (error->message, "user 'ghost" HOSTILE_SHOWN ":x': the image's "
                                            "/etc/passwd has no user 'ghost" HOSTILE_SHOWN "'"));
  g_clear_error (&error);

  /* A number that is not one, and a group that is not there (and not
   * UTF-8: the function takes any bytes). */
  g_assert_false (airlock_image_resolve_user ("1" HOSTILE_RAW, passwd, group, &uid, &gid, NULL,
                                              &error));
  assert_printable (error);
  g_assert_nonnull (strstr (error->message, "uid '1" HOSTILE_SHOWN "' is not a number"));
  g_clear_error (&error);
  g_assert_false (airlock_image_resolve_user ("app:\xfe" HOSTILE_RAW, passwd, group, &uid, &gid,
                                              NULL, &error));
  assert_printable (error);
  g_assert_nonnull (strstr (error->message, "/etc/group has no group '\\376" HOSTILE_SHOWN "'"));
  g_clear_error (&error);

  /* A 1 MiB User. */
  for (guint i = 0; i < 1024 * 1024; i++)
    g_string_append_c (big, 'u');
  g_assert_false (airlock_image_resolve_user (big->str, passwd, group, &uid, &gid, NULL, &error));
  assert_printable (error);
  g_assert_nonnull (strstr (error->message, "user '\\033uuu"));
  g_assert_nonnull (strstr (error->message, "uuu… (1048577 bytes)'"));
  g_assert_cmpuint (uid, ==, 99);
  g_clear_error (&error);

  /* The config's platform, when it contradicts the index. */
  single_layout (lies, &lying, &b_lies, 0, NULL);
  ref_lies = write_oci (f, lies, "lies");
  error = resolve_error (ref_lies);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_MALFORMED, ref_lies, b_lies.config_digest);
  g_assert_nonnull (strstr (error->message, "the config is for linux/amd64" HOSTILE_SHOWN ","));
}

/* A docker-save archive with one image, whose manifest.json says
 * @config_path (NULL: the config's real name), @layer_path (NULL: where
 * the layer is) and @repo_tag, and whose config lists @diff_id (NULL: the
 * layer's real one); all as JSON text. */
static char *
write_docker (Fixture *f, const char *name, const char *config_path, const char *diff_id,
              const char *layer_path, const char *repo_tag)
{
  const char *pairs[] = { "hello", "hello from docker\n", NULL };
  g_autoptr (Layout) l = layout_new ();
  g_autoptr (GBytes) layer = make_tar (pairs);
  g_autofree char *layer_hex = sha256_of (layer);
  g_autofree char *real_diff_id = g_strconcat ("sha256:", layer_hex, NULL);
  g_autofree char *config = g_strdup_printf (
    "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Cmd\":[\"/bin/sh\"]},"
    "\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[\"%s\"]}}",
    diff_id ? diff_id : real_diff_id);
  g_autofree char *config_hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, config, -1);
  g_autofree char *config_name = g_strconcat (config_hex, ".json", NULL);
  g_autofree char *manifest = g_strdup_printf (
    "[{\"Config\":\"%s\",\"RepoTags\":[\"%s\"],\"Layers\":[\"%s\"]}]",
    config_path ? config_path : config_name, repo_tag,
    layer_path ? layer_path : "0123abcd/layer.tar");
  g_autofree char *file = g_build_filename (f->dir, name, NULL);

  layout_put_text (l, "manifest.json", manifest);
  layout_put_text (l, config_name, config);
  layout_put (l, "0123abcd/layer.tar", layer);
  layout_write_tar (l, file);
  return g_strconcat ("docker-archive:", file, NULL);
}

static void
test_hostile_docker_archive (Fixture *f, gconstpointer data)
{
  g_autofree char *tags = write_docker (f, "tags.tar", NULL, NULL, NULL, "evil" HOSTILE_JSON ":1");
  g_autofree char *tags_ref = g_strconcat (tags, ":nope", NULL);
  g_autofree char *config = write_docker (f, "config.tar", HOSTILE_JSON ".json", NULL, NULL, "a:1");
  g_autofree char *diff_id = write_docker (f, "diff-id.tar", NULL, "sha256:" HOSTILE_JSON, NULL,
                                           "a:1");
  g_autofree char *layer = write_docker (f, "layer.tar", NULL, NULL,
                                         "gone" HOSTILE_JSON "/layer.tar", "a:1");
  g_autoptr (GError) error = NULL;

  /* RepoTags, listed when no image has the tag asked for. */
  error = resolve_error (tags_ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NOT_FOUND, tags_ref, "manifest.json");
  g_assert_nonnull (strstr (error->message, "(it holds @0 evil" HOSTILE_SHOWN ":1)"));
  g_clear_error (&error);

  /* The config's file name. */
  error = resolve_error (config);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_MALFORMED, config, "manifest.json");
  g_assert_nonnull (strstr (error->message, "config file name '" HOSTILE_SHOWN ".json'"));
  g_clear_error (&error);

  /* A diff_id as written, before it is checked. */
  error = resolve_error (diff_id);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_MALFORMED, diff_id, "0123abcd/layer.tar");
  g_assert_nonnull (strstr (error->message, "digest 'sha256:" HOSTILE_SHOWN "'"));
  g_clear_error (&error);

  /* A layer's path, in our message and the blob store's. */
  error = resolve_error (layer);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_NOT_FOUND, layer, NULL);
  g_assert_nonnull (strstr (error->message, "'gone" HOSTILE_SHOWN "/layer.tar'): missing"));
  g_assert_nonnull (strstr (error->message, "there is no file 'gone" HOSTILE_SHOWN "/layer.tar'"));
}

static void
test_hostile_archive_member (Fixture *f, gconstpointer data)
{
  /* Not UTF-8 either: a tar name is any bytes (ustar, where pax would
   * want a charset). */
  const char *names[] = { "index.json", "x\xff" HOSTILE_RAW, "x\xff" HOSTILE_RAW };
  g_autoptr (GByteArray) out = g_byte_array_new ();
  struct archive *a = archive_write_new ();
  g_autofree char *file = g_build_filename (f->dir, "twice.tar", NULL);
  g_autofree char *ref = g_strconcat ("oci-archive:", file, NULL);
  g_autoptr (GError) error = NULL;

  archive_write_set_format_ustar (a);
  g_assert_cmpint (archive_write_open (a, out, NULL, append_to_array, NULL), ==, ARCHIVE_OK);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      struct archive_entry *e = archive_entry_new ();

      archive_entry_set_pathname (e, names[i]);
      archive_entry_set_filetype (e, AE_IFREG);
      archive_entry_set_perm (e, 0644);
      archive_entry_set_size (e, 2);
      g_assert_cmpint (archive_write_header (a, e), ==, ARCHIVE_OK);
      g_assert_cmpint (archive_write_data (a, "{}", 2), ==, 2);
      archive_entry_free (e);
    }
  g_assert_cmpint (archive_write_close (a), ==, ARCHIVE_OK);
  archive_write_free (a);
  g_assert_true (g_file_set_contents (file, (const char *) out->data, out->len, NULL));
  error = resolve_error (ref);
  assert_printable (error);
  assert_error_names (error, AIRLOCK_IMAGE_ERROR_MALFORMED, ref, NULL);
  g_assert_nonnull (strstr (error->message, "holds 'x\\377" HOSTILE_SHOWN "' twice"));
}

/* layer.c escaped its entry paths before; now they are bounded too. */
static void
test_hostile_layer_entry (void)
{
  g_autoptr (GString) path = g_string_new ("/" HOSTILE_RAW);
  const char *pairs[] = { NULL, "x", NULL };
  g_autoptr (GBytes) tar = NULL;
  g_autoptr (GInputStream) stream = NULL;
  g_autoptr (AirlockRootfsModel) model = airlock_rootfs_model_new ();
  g_autoptr (AirlockLayerPlan) plan = NULL;
  g_autoptr (GError) error = NULL;

  for (guint i = 0; i < 3000; i++)
    g_string_append_c (path, 'p');
  pairs[0] = path->str;
  tar = make_tar (pairs);
  stream = g_memory_input_stream_new_from_bytes (tar);
  plan = airlock_layer_scan (stream, 0, model, 0, 0, "image 'oci:x' layer 1", &error);
  g_assert_null (plan);
  assert_printable (error);
  g_assert_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSAFE);
  g_assert_nonnull (strstr (error->message,
                            "image 'oci:x' layer 1: entry path '/" HOSTILE_SHOWN "ppp"));
  g_assert_nonnull (strstr (error->message, "ppp… (3011 bytes)' is an absolute path"));
}

/* The helper at its edges: a value of exactly the bound is whole; a list
 * is never cut inside a character (the ellipsis of a cut value is one). */
static void
test_printable_bounds (void)
{
  g_autofree char *exact = g_strnfill (AIRLOCK_IMAGE_PRINTABLE_MAX, 'e');
  g_autofree char *over = g_strnfill (AIRLOCK_IMAGE_PRINTABLE_MAX + 1, 'o');
  g_autofree char *shown_exact = airlock_image_printable (exact);
  g_autofree char *shown_over = airlock_image_printable (over);
  g_autofree char *expected = g_strdup_printf ("%.*s… (%d bytes)", AIRLOCK_IMAGE_PRINTABLE_MAX,
                                               over, AIRLOCK_IMAGE_PRINTABLE_MAX + 1);
  g_autofree char *shown_null = airlock_image_printable (NULL);
  g_autoptr (GString) list = g_string_new ("x");

  g_assert_cmpstr (shown_exact, ==, exact);
  g_assert_cmpstr (shown_over, ==, expected);
  g_assert_cmpstr (shown_null, ==, "(none)");
  /* "x" then ellipses: byte AIRLOCK_IMAGE_PRINTABLE_LIST_MAX falls inside one. */
  for (guint i = 0; i < AIRLOCK_IMAGE_PRINTABLE_LIST_MAX; i++)
    g_string_append (list, "…");
  airlock_image_printable_list_bound (list);
  assert_printable_text (list->str, AIRLOCK_IMAGE_PRINTABLE_LIST_MAX + strlen ("…"));
  g_assert_true (g_str_has_suffix (list->str, "……"));
}

/* ---- disk-check.c: can libguestfs build its appliance here ---- */

static const AirlockDiskCheck *
find_check (GPtrArray *checks, const char *what)
{
  for (guint i = 0; i < checks->len; i++)
    if (g_str_equal (((AirlockDiskCheck *) checks->pdata[i])->what, what))
      return checks->pdata[i];
  g_error ("no '%s' check", what);
  return NULL;
}

/* A host's /boot and /lib/modules at ROOT: two kernels, the newer without
 * its modules, so supermin (and the check) takes the older. */
static void
fake_boot (const char *root)
{
  g_autofree char *boot = g_build_filename (root, "boot", NULL);
  g_autofree char *mods = g_build_filename (root, "modules", "6.1.0-7-fake", NULL);
  g_autofree char *older = g_build_filename (boot, "vmlinuz-6.1.0-7-fake", NULL);
  g_autofree char *newer = g_build_filename (boot, "vmlinuz-6.1.0-10-fake", NULL);

  g_assert_cmpint (g_mkdir_with_parents (boot, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (mods, 0755), ==, 0);
  g_assert_true (g_file_set_contents (older, "MZ kernel", -1, NULL));
  g_assert_true (g_file_set_contents (newer, "MZ kernel", -1, NULL));
  g_assert_cmpint (g_chmod (root, 0755), ==, 0);
}

static char *
fake_root_for (pid_t pid)
{
  return g_strdup_printf ("%s/airlock-test-disk-check-%d", g_get_tmp_dir (), (int) pid);
}

/* In a child (g_test_trap_subprocess) made another user when it is root:
 * the kernel at the parent's fake root, mode 0600 and owned by root as
 * Ubuntu installs it, cannot be read, and the fix says how. */
static void
check_unreadable_kernel_child (void)
{
  g_autofree char *root = fake_root_for (getppid ());
  g_autofree char *boot = g_build_filename (root, "boot", NULL);
  g_autofree char *mods = g_build_filename (root, "modules", NULL);
  g_autoptr (GPtrArray) checks = NULL;
  const AirlockDiskCheck *k;

  if (geteuid () == 0)
    {
      /* libvirt (which libguestfs loads) would log to root's cache, which
       * nobody cannot open: to /dev/null instead.  setenv, not g_setenv:
       * this child has started no thread. */
      g_assert_cmpint (setenv ("LIBVIRT_LOG_OUTPUTS", "3:file:/dev/null", 1), ==, 0);
      g_assert_true (setgroups (0, NULL) == 0 && setresgid (65534, 65534, 65534) == 0
                     && setresuid (65534, 65534, 65534) == 0);
    }
  checks = airlock_disk_checks (boot, mods);
  k = find_check (checks, "host kernel");
  g_assert_false (k->ok);
  g_assert_nonnull (strstr (k->detail, "vmlinuz-6.1.0-7-fake: Permission denied"));
  g_assert_nonnull (strstr (k->fix, "sudo chmod 0644"));
  g_assert_nonnull (strstr (k->fix, "SUPERMIN_KERNEL"));
}

static void
test_disk_check_host_kernel (void)
{
  g_autofree char *root = NULL;
  g_autofree char *boot = NULL;
  g_autofree char *mods = NULL;
  g_autofree char *older = NULL;
  g_autofree char *newer = NULL;
  g_autoptr (GPtrArray) checks = NULL;
  g_autoptr (GPtrArray) none = NULL;
  const AirlockDiskCheck *k;

  if (g_test_subprocess ())
    {
      check_unreadable_kernel_child ();
      return;
    }
  if ((g_getenv ("SUPERMIN_KERNEL") && *g_getenv ("SUPERMIN_KERNEL")) || g_getenv ("LIBGUESTFS_PATH"))
    {
      g_test_skip ("SUPERMIN_KERNEL or LIBGUESTFS_PATH is set: the check would take those");
      return;
    }
  root = fake_root_for (getpid ());
  boot = g_build_filename (root, "boot", NULL);
  mods = g_build_filename (root, "modules", NULL);
  older = g_build_filename (boot, "vmlinuz-6.1.0-7-fake", NULL);
  newer = g_build_filename (boot, "vmlinuz-6.1.0-10-fake", NULL);
  fake_boot (root);

  checks = airlock_disk_checks (boot, mods);
  k = find_check (checks, "host kernel");
  g_assert_true (k->ok);
  g_assert_nonnull (strstr (k->detail, older));
  g_assert_null (k->fix);
  g_assert_nonnull (find_check (checks, "libguestfs"));
  g_assert_nonnull (find_check (checks, "supermin"));

  /* As Ubuntu installs it: root's alone. */
  g_assert_cmpint (g_chmod (older, geteuid () == 0 ? 0600 : 0), ==, 0);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();

  /* No kernel at all. */
  g_assert_cmpint (g_remove (older), ==, 0);
  g_assert_cmpint (g_remove (newer), ==, 0);
  none = airlock_disk_checks (boot, mods);
  k = find_check (none, "host kernel");
  g_assert_false (k->ok);
  g_assert_nonnull (strstr (k->detail, "no "));
  g_assert_nonnull (k->fix);
  airlock_rm_rf (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  g_test_add_func ("/image/disk-check/host-kernel", test_disk_check_host_kernel);
  ADD ("/image/oci/single-arch", test_oci_single_arch);
  g_test_add ("/image/oci/multi-arch-variant-v8", Fixture, &oci_multi_arch, fixture_setup, test_multi_arch, fixture_teardown);
  g_test_add ("/image/oci/arm64-without-variant", Fixture, &oci_arm64_no_variant, fixture_setup, test_multi_arch, fixture_teardown);
  ADD ("/image/oci/tag-selection", test_oci_tag_selection);
  g_test_add ("/image/oci-archive/multi-arch", Fixture, &oci_archive_multi_arch, fixture_setup, test_multi_arch, fixture_teardown);
  ADD ("/image/docker-archive/resolve", test_docker_archive);
  ADD ("/image/docker-archive/config-name-is-its-digest", test_docker_archive_bad_config_name);
  ADD ("/image/docker-archive/tampered-layer", test_docker_archive_tampered_layer);
  ADD ("/image/bad/digest-mismatch", test_bad_digest_mismatch);
  ADD ("/image/bad/layer-digest-mismatch", test_bad_layer_digest_mismatch);
  ADD ("/image/bad/size-mismatch", test_bad_size_mismatch);
  ADD ("/image/bad/layer-size-mismatch", test_bad_layer_size_mismatch);
  ADD ("/image/bad/missing-blob", test_bad_missing_blob);
  ADD ("/image/bad/truncated-archive", test_bad_truncated_archive);
  ADD ("/image/bad/malformed-json", test_bad_malformed_json);
  ADD ("/image/bad/json-nested-too-deep", test_bad_deep_json);
  ADD ("/image/bad/layer-bomb-over-size-bound", test_bad_layer_bomb);
  ADD ("/image/bad/layers-over-size-bound-together", test_bad_layers_over_bound_together);
  ADD ("/image/bad/unknown-media-types", test_bad_unknown_media_types);
  ADD ("/image/bad/index-without-arch", test_bad_no_arch);
  ADD ("/image/bad/config-arch-contradicts-index", test_bad_config_arch_lies);
  ADD ("/image/bad/claims-compression-it-lacks", test_bad_not_gzip);
  ADD ("/image/bad/too-many-layers", test_bad_too_many_layers);
  ADD ("/image/bad/index-tree-too-big", test_bad_index_tree_too_big);
  ADD ("/image/shown/index-strings-escaped", test_hostile_index);
  ADD ("/image/shown/config-strings-escaped", test_hostile_config);
  ADD ("/image/shown/docker-archive-strings-escaped", test_hostile_docker_archive);
  ADD ("/image/shown/archive-member-escaped", test_hostile_archive_member);
#undef ADD
  for (guint i = 0; i < G_N_ELEMENTS (config_list_rows); i++)
    g_test_add (config_list_rows[i].path, Fixture, &config_list_rows[i], fixture_setup,
                test_config_list, fixture_teardown);
  for (guint i = 0; i < G_N_ELEMENTS (stop_signal_rows); i++)
    g_test_add (stop_signal_rows[i].path, Fixture, &stop_signal_rows[i], fixture_setup,
                test_config_stop_signal, fixture_teardown);
  g_test_add_func ("/image/bad/reference", test_bad_reference);
  g_test_add_func ("/image/bad/bare-path-gets-its-transport", test_bare_path_suggestion);
  g_test_add_func ("/image/remote/loopback-registry", test_loopback_registry);
  g_test_add_func ("/image/remote/copy-by-digest", test_docker_by_digest);
  g_test_add_func ("/image/user/resolve", test_resolve_user);
  g_test_add_func ("/image/user/numeric-without-files", test_resolve_user_numeric_without_files);
  g_test_add_func ("/image/user/errors", test_resolve_user_errors);
  g_test_add_func ("/image/command/docker-run-semantics", test_command);
  g_test_add_func ("/image/shown/layer-entry-bounded", test_hostile_layer_entry);
  g_test_add_func ("/image/shown/printable-bounds", test_printable_bounds);

  return g_test_run ();
}
