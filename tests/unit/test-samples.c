/* The sample OCI images (images/sample), checked without a VM and without
 * lib/image: every descriptor's digest and size against its blob, the
 * index → manifest → config → layer chain per arch, the config the tests in
 * the VM rely on (entrypoint, user, env, cwd), the layers' files (busybox
 * and our program for the right machine, the user, the whiteout), the
 * oci-archive against the layout, and a rebuild that must be byte-identical.
 *
 * $AIRLOCK_SAMPLE_DIR is <build>/images/sample, $AIRLOCK_BUILD_SAMPLE the
 * build-sample program, $AIRLOCK_SAMPLE_PINS images/sample/packages.ini. */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"

#define ELF_MACHINE_X86_64 62
#define ELF_MACHINE_AARCH64 183

typedef struct {
  const char *name;
  const char *program;
  const char *user;
  const char *marker;
} SampleCase;

static const SampleCase sample_cases[] = {
  { "clean", "clean-server", "app", "AIRLOCK_SAMPLE=clean" },
  { "egress", "egress-probe", "root", "AIRLOCK_SAMPLE=egress" },
  { "rpc", "rpc-server", "app", "AIRLOCK_SAMPLE=rpc" },
};

static const char *
sample_dir (void)
{
  const char *dir = g_getenv ("AIRLOCK_SAMPLE_DIR");

  g_assert_nonnull (dir);
  return dir;
}

/* ---- a minimal ustar reader (the samples are ustar, see build-sample.c) */

typedef struct {
  char *path;
  char type;        /* '0' file, '2' symlink, '5' directory */
  guint mode, uid, gid;
  GBytes *content;
  char *target;
} TarEntry;

static void
tar_entry_free (TarEntry *e)
{
  g_free (e->path);
  g_clear_pointer (&e->content, g_bytes_unref);
  g_free (e->target);
  g_free (e);
}

static guint64
octal_field (const guint8 *field, gsize len)
{
  guint64 v = 0;

  for (gsize i = 0; i < len && field[i] >= '0' && field[i] <= '7'; i++)
    v = v * 8 + (field[i] - '0');
  return v;
}

static char *
string_field (const guint8 *field, gsize len)
{
  return g_strndup ((const char *) field, len);
}

/* path (without a trailing '/') → TarEntry; fails the test on a malformed
 * stream. */
static GHashTable *
read_tar (GBytes *tar)
{
  GHashTable *entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                               (GDestroyNotify) tar_entry_free);
  gsize len;
  const guint8 *data = g_bytes_get_data (tar, &len);
  gsize pos = 0;

  for (;;)
    {
      const guint8 *h;
      TarEntry *e;
      g_autofree char *name = NULL;
      g_autofree char *prefix = NULL;
      guint64 size;
      gsize i;

      g_assert_cmpuint (pos + 512, <=, len);
      h = data + pos;
      for (i = 0; i < 512 && h[i] == 0; i++)
        ;
      if (i == 512)
        break; /* end of archive */
      g_assert_cmpmem (h + 257, 5, "ustar", 5);
      e = g_new0 (TarEntry, 1);
      name = string_field (h, 100);
      prefix = string_field (h + 345, 155);
      e->path = *prefix ? g_strconcat (prefix, "/", name, NULL) : g_strdup (name);
      if (g_str_has_suffix (e->path, "/"))
        e->path[strlen (e->path) - 1] = '\0';
      e->mode = (guint) octal_field (h + 100, 8);
      e->uid = (guint) octal_field (h + 108, 8);
      e->gid = (guint) octal_field (h + 116, 8);
      size = octal_field (h + 124, 12);
      g_assert_cmpuint (octal_field (h + 136, 12), ==, 0); /* mtime */
      e->type = (char) h[156];
      e->target = string_field (h + 157, 100);
      pos += 512;
      g_assert_cmpuint (pos + size, <=, len);
      e->content = g_bytes_new_from_bytes (tar, pos, size);
      pos += (size + 511) / 512 * 512;
      g_assert_false (g_hash_table_contains (entries, e->path));
      g_hash_table_insert (entries, e->path, e);
    }
  return entries;
}

static const TarEntry *
tar_lookup (GHashTable *entries, const char *path, char type)
{
  const TarEntry *e = g_hash_table_lookup (entries, path);

  if (!e)
    g_error ("layer has no '%s'", path);
  g_assert_cmpint (e->type, ==, type);
  return e;
}

/* ---- blobs ------------------------------------------------------------- */

static char *
sha256_digest (GBytes *bytes)
{
  g_autofree char *hex = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);

  return g_strconcat ("sha256:", hex, NULL);
}

/* The blob @descriptor names, after checking its media type, size and
 * digest; records the digest in @seen. */
static GBytes *
load_blob (const char *layout, JsonObject *descriptor, const char *media_type, GHashTable *seen)
{
  const char *digest = json_object_get_string_member (descriptor, "digest");
  gint64 size = json_object_get_int_member (descriptor, "size");
  g_autofree char *path = NULL;
  g_autofree char *data = NULL;
  g_autofree char *actual = NULL;
  gsize len = 0;
  GBytes *bytes;
  g_autoptr (GError) error = NULL;

  g_assert_cmpstr (json_object_get_string_member (descriptor, "mediaType"), ==, media_type);
  g_assert_true (g_str_has_prefix (digest, "sha256:"));
  g_assert_cmpuint (strlen (digest), ==, strlen ("sha256:") + 64);
  path = g_build_filename (layout, "blobs", "sha256", digest + strlen ("sha256:"), NULL);
  g_file_get_contents (path, &data, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpint ((gint64) len, ==, size);
  bytes = g_bytes_new_take (g_steal_pointer (&data), len);
  actual = sha256_digest (bytes);
  g_assert_cmpstr (actual, ==, digest);
  g_hash_table_add (seen, g_strdup (digest + strlen ("sha256:")));
  return bytes;
}

static JsonObject *
parse_object (GBytes *bytes)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  JsonNode *root;

  json_parser_load_from_data (parser, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                              &error);
  g_assert_no_error (error);
  root = json_parser_get_root (parser);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  return json_object_ref (json_node_get_object (root));
}

static GBytes *
gunzip (GBytes *gz)
{
  g_autoptr (GZlibDecompressor) decompressor = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  g_autoptr (GInputStream) memory = g_memory_input_stream_new_from_bytes (gz);
  g_autoptr (GInputStream) stream = g_converter_input_stream_new (memory, G_CONVERTER (decompressor));
  g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
  g_autoptr (GError) error = NULL;

  g_output_stream_splice (out, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &error);
  g_assert_no_error (error);
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));
}

static void
assert_elf_for (GBytes *bytes, guint16 machine)
{
  gsize len;
  const guint8 *d = g_bytes_get_data (bytes, &len);

  g_assert_cmpuint (len, >, 64);
  g_assert_cmpmem (d, 4, "\177ELF", 4);
  g_assert_cmpuint (d[4], ==, 2); /* 64-bit */
  g_assert_cmpuint (d[5], ==, 1); /* little-endian */
  g_assert_cmpuint (d[18] | (d[19] << 8), ==, machine);
}

static gboolean
strv_has (JsonArray *array, const char *value)
{
  for (guint i = 0; i < json_array_get_length (array); i++)
    if (g_str_equal (json_array_get_string_element (array, i), value))
      return TRUE;
  return FALSE;
}

/* Config and layers of one arch's manifest. */
static void
check_manifest (const SampleCase *sample, const char *layout, JsonObject *manifest,
                const char *arch, GHashTable *seen)
{
  JsonObject *config_descriptor = json_object_get_object_member (manifest, "config");
  JsonArray *layers = json_object_get_array_member (manifest, "layers");
  g_autoptr (GBytes) config_bytes = load_blob (layout, config_descriptor, MT_CONFIG, seen);
  g_autoptr (JsonObject) config = parse_object (config_bytes);
  JsonObject *rootfs = json_object_get_object_member (config, "rootfs");
  JsonArray *diff_ids = json_object_get_array_member (rootfs, "diff_ids");
  JsonObject *run = json_object_get_object_member (config, "config");
  JsonArray *entrypoint = json_object_get_array_member (run, "Entrypoint");
  g_autofree char *entrypoint_path = g_strconcat ("/usr/local/bin/", sample->program, NULL);
  guint16 machine = g_str_equal (arch, "amd64") ? ELF_MACHINE_X86_64 : ELF_MACHINE_AARCH64;
  GHashTable *files[3] = { NULL, NULL, NULL };

  g_assert_cmpint (json_object_get_int_member (manifest, "schemaVersion"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (manifest, "mediaType"), ==, MT_MANIFEST);

  g_assert_cmpstr (json_object_get_string_member (config, "architecture"), ==, arch);
  g_assert_cmpstr (json_object_get_string_member (config, "os"), ==, "linux");
  g_assert_cmpstr (json_object_get_string_member_with_default (config, "variant", NULL), ==,
                   g_str_equal (arch, "arm64") ? "v8" : NULL);
  g_assert_cmpstr (json_object_get_string_member (rootfs, "type"), ==, "layers");
  g_assert_cmpuint (json_array_get_length (layers), ==, 3);
  g_assert_cmpuint (json_array_get_length (diff_ids), ==, json_array_get_length (layers));

  g_assert_cmpuint (json_array_get_length (entrypoint), ==, 1);
  g_assert_cmpstr (json_array_get_string_element (entrypoint, 0), ==, entrypoint_path);
  g_assert_cmpstr (json_object_get_string_member (run, "User"), ==, sample->user);
  g_assert_cmpstr (json_object_get_string_member (run, "WorkingDir"), ==, "/srv");
  g_assert_true (strv_has (json_object_get_array_member (run, "Env"),
                           "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
  g_assert_true (strv_has (json_object_get_array_member (run, "Env"), sample->marker));

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr (GBytes) gz = load_blob (layout, json_array_get_object_element (layers, i),
                                         MT_LAYER_GZIP, seen);
      g_autoptr (GBytes) tar = gunzip (gz);
      g_autofree char *diff_id = sha256_digest (tar);

      /* The diff_id is the digest of the uncompressed layer. */
      g_assert_cmpstr (diff_id, ==, json_array_get_string_element (diff_ids, i));
      files[i] = read_tar (tar);
    }

  /* Layer 1: busybox for this machine, /bin/sh through it. */
  assert_elf_for (tar_lookup (files[0], "bin/busybox", '0')->content, machine);
  g_assert_cmpstr (tar_lookup (files[0], "bin/sh", '2')->target, ==, "busybox");
  g_assert_cmpuint (tar_lookup (files[0], "tmp", '5')->mode, ==, 01777);

  /* Layer 2: our program for this machine, the user, its working dir, and
   * the file layer 3 deletes. */
  {
    g_autofree char *program = g_strconcat ("usr/local/bin/", sample->program, NULL);
    const TarEntry *passwd = tar_lookup (files[1], "etc/passwd", '0');
    const TarEntry *group = tar_lookup (files[1], "etc/group", '0');
    const TarEntry *srv = tar_lookup (files[1], "srv", '5');
    g_autofree char *passwd_text = g_strndup (g_bytes_get_data (passwd->content, NULL),
                                              g_bytes_get_size (passwd->content));
    g_autofree char *group_text = g_strndup (g_bytes_get_data (group->content, NULL),
                                             g_bytes_get_size (group->content));

    assert_elf_for (tar_lookup (files[1], program, '0')->content, machine);
    g_assert_cmpuint (tar_lookup (files[1], program, '0')->mode, ==, 0755);
    g_assert_nonnull (strstr (passwd_text, "\napp:x:1000:1000:"));
    g_assert_true (g_str_has_prefix (passwd_text, "root:x:0:0:"));
    g_assert_nonnull (strstr (group_text, "\napp:x:1000:"));
    g_assert_cmpuint (srv->uid, ==, 1000);
    g_assert_cmpuint (srv->gid, ==, 1000);
    tar_lookup (files[1], "etc/airlock-deleted", '0');
  }

  /* Layer 3: only the whiteout (and its directory). */
  tar_lookup (files[2], "etc/.wh.airlock-deleted", '0');
  g_assert_cmpuint (g_hash_table_size (files[2]), ==, 2);

  for (guint i = 0; i < 3; i++)
    g_hash_table_unref (files[i]);
}

static void
test_layout (gconstpointer data)
{
  const SampleCase *sample = data;
  g_autofree char *layout = g_build_filename (sample_dir (), sample->name, NULL);
  g_autofree char *oci_layout_path = g_build_filename (layout, "oci-layout", NULL);
  g_autofree char *index_path = g_build_filename (layout, "index.json", NULL);
  g_autofree char *blobs_path = g_build_filename (layout, "blobs", "sha256", NULL);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GBytes) oci_layout_bytes = NULL;
  g_autoptr (GBytes) index_bytes = NULL;
  g_autoptr (GBytes) image_index_bytes = NULL;
  g_autoptr (JsonObject) oci_layout = NULL;
  g_autoptr (JsonObject) index = NULL;
  g_autoptr (JsonObject) image_index = NULL;
  g_autoptr (GDir) blobs = NULL;
  g_autoptr (GError) error = NULL;
  JsonArray *entries;
  JsonObject *top;
  char *text = NULL;
  gsize len = 0;
  const char *blob;
  gboolean have_amd64 = FALSE, have_arm64 = FALSE;

  g_file_get_contents (oci_layout_path, &text, &len, &error);
  g_assert_no_error (error);
  oci_layout_bytes = g_bytes_new_take (text, len);
  oci_layout = parse_object (oci_layout_bytes);
  g_assert_cmpstr (json_object_get_string_member (oci_layout, "imageLayoutVersion"), ==, "1.0.0");

  g_file_get_contents (index_path, &text, &len, &error);
  g_assert_no_error (error);
  index_bytes = g_bytes_new_take (text, len);
  index = parse_object (index_bytes);
  g_assert_cmpint (json_object_get_int_member (index, "schemaVersion"), ==, 2);
  entries = json_object_get_array_member (index, "manifests");
  g_assert_cmpuint (json_array_get_length (entries), ==, 1);
  top = json_array_get_object_element (entries, 0);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (top, "annotations"),
                                                  "org.opencontainers.image.ref.name"), ==, "latest");

  /* index.json → the image index → one manifest per arch. */
  image_index_bytes = load_blob (layout, top, MT_INDEX, seen);
  image_index = parse_object (image_index_bytes);
  g_assert_cmpint (json_object_get_int_member (image_index, "schemaVersion"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (image_index, "mediaType"), ==, MT_INDEX);
  entries = json_object_get_array_member (image_index, "manifests");
  g_assert_cmpuint (json_array_get_length (entries), ==, 2);
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *descriptor = json_array_get_object_element (entries, i);
      JsonObject *platform = json_object_get_object_member (descriptor, "platform");
      const char *arch = json_object_get_string_member (platform, "architecture");
      const char *variant = json_object_get_string_member_with_default (platform, "variant", NULL);
      g_autoptr (GBytes) manifest_bytes = load_blob (layout, descriptor, MT_MANIFEST, seen);
      g_autoptr (JsonObject) manifest = parse_object (manifest_bytes);

      g_assert_cmpstr (json_object_get_string_member (platform, "os"), ==, "linux");
      if (g_str_equal (arch, "amd64"))
        {
          g_assert_false (have_amd64);
          g_assert_null (variant);
          have_amd64 = TRUE;
        }
      else
        {
          g_assert_cmpstr (arch, ==, "arm64");
          g_assert_cmpstr (variant, ==, "v8");
          g_assert_false (have_arm64);
          have_arm64 = TRUE;
        }
      check_manifest (sample, layout, manifest, arch, seen);
    }
  g_assert_true (have_amd64 && have_arm64);

  /* No blob that nothing refers to (a leftover of an earlier build). */
  blobs = g_dir_open (blobs_path, 0, &error);
  g_assert_no_error (error);
  while ((blob = g_dir_read_name (blobs)))
    if (!g_hash_table_contains (seen, blob))
      g_error ("blob '%s' of '%s' is not referred to", blob, layout);
}

/* Every file of the layout, relative path → bytes. */
static void
collect_files (const char *root, const char *rel, GHashTable *files)
{
  g_autofree char *dir_path = g_build_filename (root, rel, NULL);
  g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree char *child_rel = *rel ? g_build_filename (rel, name, NULL) : g_strdup (name);
      g_autofree char *child = g_build_filename (root, child_rel, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        collect_files (root, child_rel, files);
      else
        {
          char *data = NULL;
          gsize len = 0;
          g_autoptr (GError) error = NULL;

          g_file_get_contents (child, &data, &len, &error);
          g_assert_no_error (error);
          g_hash_table_insert (files, g_steal_pointer (&child_rel), g_bytes_new_take (data, len));
        }
    }
}

/* The oci-archive holds exactly the layout's files. */
static void
test_archive (gconstpointer data)
{
  const SampleCase *sample = data;
  g_autofree char *layout = g_build_filename (sample_dir (), sample->name, NULL);
  g_autofree char *archive_name = g_strconcat (sample->name, ".tar", NULL);
  g_autofree char *archive_path = g_build_filename (sample_dir (), archive_name, NULL);
  g_autoptr (GHashTable) files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_bytes_unref);
  g_autoptr (GHashTable) entries = NULL;
  g_autoptr (GBytes) tar = NULL;
  g_autoptr (GError) error = NULL;
  GHashTableIter iter;
  gpointer key, value;
  char *text = NULL;
  gsize len = 0;
  guint regular = 0;

  collect_files (layout, "", files);
  g_file_get_contents (archive_path, &text, &len, &error);
  g_assert_no_error (error);
  tar = g_bytes_new_take (text, len);
  entries = read_tar (tar);
  g_hash_table_iter_init (&iter, entries);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const TarEntry *e = value;
      GBytes *file;

      if (e->type == '5')
        continue;
      g_assert_cmpint (e->type, ==, '0');
      file = g_hash_table_lookup (files, e->path);
      if (!file)
        g_error ("'%s' has '%s', the layout does not", archive_path, e->path);
      g_assert_true (g_bytes_equal (file, e->content));
      regular++;
    }
  g_assert_cmpuint (regular, ==, g_hash_table_size (files));
}

static gboolean
files_equal (const char *a, const char *b)
{
  g_autofree char *da = NULL, *db = NULL;
  gsize la = 0, lb = 0;

  return g_file_get_contents (a, &da, &la, NULL) && g_file_get_contents (b, &db, &lb, NULL)
         && la == lb && memcmp (da, db, la) == 0;
}

/* Building the image again from the same inputs gives the same bytes:
 * what makes the sample's digests stable enough to write into tests. */
static void
test_rebuild (gconstpointer data)
{
  const SampleCase *sample = data;
  const char *tool = g_getenv ("AIRLOCK_BUILD_SAMPLE");
  const char *pins = g_getenv ("AIRLOCK_SAMPLE_PINS");
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("airlock-sample-XXXXXX", &error);
  g_autofree char *layout = NULL, *archive = NULL, *archive_name = NULL, *built_archive = NULL;
  g_autofree char *busybox_amd64 = NULL, *busybox_arm64 = NULL;
  g_autofree char *program_amd64 = NULL, *program_arm64 = NULL;
  g_autofree char *built_layout = NULL, *built_index = NULL, *new_index = NULL;
  g_autofree char *p_amd64 = g_strconcat (sample->program, "-amd64", NULL);
  g_autofree char *p_arm64 = g_strconcat (sample->program, "-arm64", NULL);
  g_autoptr (GSubprocess) proc = NULL;

  g_assert_no_error (error);
  g_assert_nonnull (tool);
  g_assert_nonnull (pins);
  layout = g_build_filename (tmp, sample->name, NULL);
  archive_name = g_strconcat (sample->name, ".tar", NULL);
  archive = g_build_filename (tmp, archive_name, NULL);
  busybox_amd64 = g_build_filename (sample_dir (), "busybox-amd64", NULL);
  busybox_arm64 = g_build_filename (sample_dir (), "busybox-arm64", NULL);
  program_amd64 = g_build_filename (sample_dir (), p_amd64, NULL);
  program_arm64 = g_build_filename (sample_dir (), p_arm64, NULL);
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, tool, "image", "--name", sample->name,
                           "--pins", pins, "--busybox-amd64", busybox_amd64, "--busybox-arm64",
                           busybox_arm64, "--program-amd64", program_amd64, "--program-arm64",
                           program_arm64, "--layout", layout, "--archive", archive, NULL);
  g_assert_no_error (error);
  g_subprocess_wait_check (proc, NULL, &error);
  g_assert_no_error (error);

  built_archive = g_build_filename (sample_dir (), archive_name, NULL);
  g_assert_true (files_equal (archive, built_archive));
  built_layout = g_build_filename (sample_dir (), sample->name, NULL);
  built_index = g_build_filename (built_layout, "index.json", NULL);
  new_index = g_build_filename (layout, "index.json", NULL);
  g_assert_true (files_equal (new_index, built_index));

  {
    g_autoptr (GFile) dir = g_file_new_for_path (tmp);
    g_autoptr (GSubprocess) rm = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, "rm", "-rf",
                                                   "--", tmp, NULL);
    g_assert_no_error (error);
    g_subprocess_wait_check (rm, NULL, &error);
    g_assert_no_error (error);
    g_assert_false (g_file_query_exists (dir, NULL));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (sample_cases); i++)
    {
      g_autofree char *layout = g_strdup_printf ("/samples/%s/layout-is-consistent",
                                                 sample_cases[i].name);
      g_autofree char *archive = g_strdup_printf ("/samples/%s/archive-matches-layout",
                                                  sample_cases[i].name);
      g_autofree char *rebuild = g_strdup_printf ("/samples/%s/rebuild-is-byte-identical",
                                                  sample_cases[i].name);

      g_test_add_data_func (layout, &sample_cases[i], test_layout);
      g_test_add_data_func (archive, &sample_cases[i], test_archive);
      g_test_add_data_func (rebuild, &sample_cases[i], test_rebuild);
    }
  return g_test_run ();
}
