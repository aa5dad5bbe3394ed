/* libFuzzer harness for the OCI image intake (lib/image/source.c, blob.c,
 * user.c, and layer-stream.c as airlock_image_open_layer uses it).
 *
 * The input is used two ways: as an image in the text form of
 * fuzz-intake.h, which the harness writes into a tar (so the JSON's
 * digests can match), and as an archive as it is (blob.c's tar index on
 * arbitrary bytes), opened both as oci-archive: and as docker-archive:.
 * Either archive is a memfd the library opens by its /proc/self/fd path:
 * the public entry points read it exactly as they read a file, and nothing
 * touches the disk.
 *
 * Each reference is opened twice; one source lists its arches and then
 * resolves every arch, the other resolves first and lists last.  Besides
 * the sanitizers' findings, it aborts when an invariant breaks:
 *   - every failure is an AIRLOCK_IMAGE_ERROR whose message names the
 *     reference (image.h);
 *   - the listed arches are distinct, the other platforms distinct and not
 *     ours; an arch that resolves is one the list names;
 *   - a resolved image is the arch asked for, its platform is that arch's,
 *     its index, manifest and config digests are well-formed and name
 *     bytes the archive holds (a docker-archive has no manifest blob), it
 *     has at most 1000 layers, each with a well-formed digest and a
 *     compression its media type means;
 *   - what resolves, and how it fails, does not depend on whether the
 *     arches were listed first (ensure_platform caches);
 *   - a layer stream read to its end (in reads of pseudo-random sizes)
 *     either fails with NOT_FOUND, DIGEST or MALFORMED, or, for a plain
 *     layer, gave exactly the bytes its digest and size name;
 *   - airlock_image_command is Entrypoint followed by the arguments, or by
 *     Cmd without them, and NO_COMMAND exactly when that is empty;
 *   - airlock_image_resolve_user against the input's /etc files, and
 *     against none: on failure USER and the out-parameters untouched; on
 *     success 31-bit ids, distinct supplementary groups, none with an
 *     explicit group, uid 0 for an empty User, the number for a numeric
 *     one, and without /etc files only numeric users with gid 0 unless a
 *     group is named. */
#define _GNU_SOURCE

#include "config.h"

#include "image/image.h"

#include "fuzz-intake.h"
#include "fuzz-util.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Layers opened per resolved image: each walks the archive again. */
#define FUZZ_INTAKE_LAYERS_READ 8
#define FUZZ_INTAKE_SENTINEL 0xdeadbeefu

typedef struct {
  int fd;
  char *path;
} MemFile;

static MemFile structured_file = { -1, NULL };
static MemFile raw_file = { -1, NULL };

/* Replaces the memfd's contents with @bytes; returns its path. */
static const char *
mem_file_put (MemFile *file, const guint8 *bytes, gsize size)
{
  gsize done = 0;

  if (file->fd < 0)
    {
      file->fd = memfd_create ("fuzz-intake", MFD_CLOEXEC);
      fuzz_check (file->fd >= 0);
      file->path = g_strdup_printf ("/proc/self/fd/%d", file->fd);
    }
  fuzz_check (ftruncate (file->fd, 0) == 0);
  while (done < size)
    {
      ssize_t n = pwrite (file->fd, bytes + done, size - done, (off_t) done);

      fuzz_check (n > 0 || (n < 0 && errno == EINTR));
      if (n > 0)
        done += (gsize) n;
    }
  return file->path;
}

/* The SHA-256 of every regular file's bytes in @archive (read with the
 * filters blob.c takes): what a verified digest may name. */
static GHashTable *
archive_digests (const guint8 *archive, gsize size)
{
  GHashTable *digests = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  struct archive *a = archive_read_new ();
  struct archive_entry *entry;
  guint8 buf[16384];
  int r;

  archive_read_support_format_tar (a);
  archive_read_support_filter_none (a);
  archive_read_support_filter_gzip (a);
  archive_read_support_filter_zstd (a);
  archive_read_support_filter_xz (a);
  if (archive_read_open_memory (a, archive, size) == ARCHIVE_OK)
    /* as blob.c walks it: a warning is not the end */
    while ((r = archive_read_next_header (a, &entry)) == ARCHIVE_OK || r == ARCHIVE_WARN)
      {
        GChecksum *checksum;
        la_ssize_t n;

        if (archive_entry_filetype (entry) != AE_IFREG || archive_entry_hardlink (entry))
          continue;
        checksum = g_checksum_new (G_CHECKSUM_SHA256);
        while ((n = archive_read_data (a, buf, sizeof buf)) > 0)
          g_checksum_update (checksum, buf, n);
        if (n == 0)
          g_hash_table_add (digests, g_strdup (g_checksum_get_string (checksum)));
        g_checksum_free (checksum);
      }
  archive_read_free (a);
  return digests;
}

static gboolean
is_digest (const char *digest)
{
  if (!digest || !g_str_has_prefix (digest, "sha256:") || strlen (digest) != 7 + 64)
    return FALSE;
  for (const char *p = digest + 7; *p; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f'))
      return FALSE;
  return TRUE;
}

static void
check_error (const GError *error, const char *reference)
{
  fuzz_check (error != NULL);
  fuzz_check (error->domain == AIRLOCK_IMAGE_ERROR);
  fuzz_check (error->code >= AIRLOCK_IMAGE_ERROR_REFERENCE
              && error->code <= AIRLOCK_IMAGE_ERROR_NO_COMMAND);
  fuzz_check (strstr (error->message, reference) != NULL);
}

static gboolean
arch_listed (GArray *arches, AirlockArch arch)
{
  for (guint i = 0; arches && i < arches->len; i++)
    if (g_array_index (arches, AirlockArch, i) == arch)
      return TRUE;
  return FALSE;
}

/* A summary of the arches, for comparing the two orders. */
static char *
list_and_check (AirlockImageSource *source, const char *reference, GArray **ret_arches)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) others = NULL;
  g_autoptr (GArray) arches = airlock_image_source_list_arches (source, &others, &error);
  GString *summary = g_string_new (NULL);

  fuzz_check ((arches == NULL) == (error != NULL));
  if (!arches)
    {
      check_error (error, reference);
      g_string_append_printf (summary, "error %d %s", error->code, error->message);
      *ret_arches = NULL;
      return g_string_free (summary, FALSE);
    }
  fuzz_check (others != NULL);
  for (guint i = 0; i < arches->len; i++)
    {
      AirlockArch arch = g_array_index (arches, AirlockArch, i);

      fuzz_check ((unsigned) arch < AIRLOCK_N_ARCHES);
      for (guint j = 0; j < i; j++)
        fuzz_check (g_array_index (arches, AirlockArch, j) != arch);
      g_string_append_printf (summary, "%s ", airlock_arch_to_string (arch));
    }
  for (guint i = 0; i < others->len; i++)
    {
      const char *p = others->pdata[i];

      fuzz_check (!g_str_equal (p, "linux/amd64") && !g_str_equal (p, "linux/arm64")
                  && !g_str_equal (p, "linux/amd64/v1") && !g_str_equal (p, "linux/arm64/v8"));
      for (guint j = 0; j < i; j++)
        fuzz_check (!g_str_equal (p, others->pdata[j]));
      g_string_append_printf (summary, "[%s] ", p);
    }
  *ret_arches = g_steal_pointer (&arches);
  return g_string_free (summary, FALSE);
}

static void
check_layer_read (AirlockImageSource *source, const AirlockImageLayer *layer,
                  const char *reference, guint64 *rng)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GInputStream) stream = airlock_image_open_layer (source, layer, &error);
  g_autoptr (GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 buf[4096];
  guint64 total = 0;
  gssize n;

  if (!stream)
    {
      check_error (error, reference);
      fuzz_check (error->code == AIRLOCK_IMAGE_ERROR_NOT_FOUND
                  || error->code == AIRLOCK_IMAGE_ERROR_DIGEST);
      return;
    }
  do
    {
      gsize want = 1 + fuzz_splitmix64 (rng) % sizeof buf;

      n = g_input_stream_read (stream, buf, want, NULL, &error);
      if (n > 0)
        {
          fuzz_check ((gsize) n <= want);
          g_checksum_update (checksum, buf, n);
          total += (guint64) n;
        }
    }
  while (n > 0);
  if (n < 0)
    {
      check_error (error, reference);
      fuzz_check (error->code == AIRLOCK_IMAGE_ERROR_DIGEST
                  || error->code == AIRLOCK_IMAGE_ERROR_MALFORMED);
      /* sticky: a later read fails again, never ends cleanly */
      g_clear_error (&error);
      fuzz_check (g_input_stream_read (stream, buf, sizeof buf, NULL, &error) < 0);
      return;
    }
  fuzz_check (error == NULL);
  if (layer->compression == AIRLOCK_LAYER_PLAIN)
    {
      fuzz_check (total == layer->size);
      fuzz_check (g_str_equal (g_checksum_get_string (checksum), layer->digest + 7));
    }
}

static void
check_command (const AirlockImage *image, const char *const *args)
{
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) argv = airlock_image_command (image, args, &error);
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  g_auto (GStrv) expected = NULL;

  if (image->entrypoint)
    g_strv_builder_addv (builder, (const char **) image->entrypoint);
  if (args && args[0])
    g_strv_builder_addv (builder, (const char **) args);
  else if (image->cmd)
    g_strv_builder_addv (builder, (const char **) image->cmd);
  expected = g_strv_builder_end (builder);

  fuzz_check ((argv == NULL) == (error != NULL));
  if (!argv)
    {
      check_error (error, image->reference);
      fuzz_check (error->code == AIRLOCK_IMAGE_ERROR_NO_COMMAND);
      fuzz_check (expected[0] == NULL);
      return;
    }
  fuzz_check (g_strv_equal ((const char *const *) argv, (const char *const *) expected));
  fuzz_check (argv[0] != NULL);
}

static void
check_user (const char *user, GBytes *passwd, GBytes *group)
{
  g_autoptr (GError) error = NULL;
  GArray *sentinel = g_array_new (FALSE, FALSE, sizeof (guint32));
  GArray *groups = sentinel;
  guint32 uid = FUZZ_INTAKE_SENTINEL, gid = FUZZ_INTAKE_SENTINEL;
  const char *u = user ? user : "";
  const char *colon = strchr (u, ':');
  g_autofree char *user_part = colon ? g_strndup (u, colon - u) : g_strdup (u);
  gboolean numeric = *user_part != '\0';
  gboolean ok = airlock_image_resolve_user (user, passwd, group, &uid, &gid, &groups, &error);

  for (const char *p = user_part; *p; p++)
    numeric = numeric && g_ascii_isdigit (*p);
  fuzz_check (ok == (error == NULL));
  if (!ok)
    {
      fuzz_check (error->domain == AIRLOCK_IMAGE_ERROR);
      fuzz_check (error->code == AIRLOCK_IMAGE_ERROR_USER);
      fuzz_check (g_str_has_prefix (error->message, "user '"));
      fuzz_check (uid == FUZZ_INTAKE_SENTINEL && gid == FUZZ_INTAKE_SENTINEL);
      fuzz_check (groups == sentinel);
      g_array_unref (sentinel);
      return;
    }
  g_array_unref (sentinel);
  fuzz_check (groups != sentinel && groups != NULL);
  fuzz_check (uid <= G_MAXINT32 && gid <= G_MAXINT32);
  if (!*user_part)
    fuzz_check (uid == 0);
  if (numeric)
    fuzz_check (g_ascii_strtoull (user_part, NULL, 10) == uid);
  if (colon)
    fuzz_check (groups->len == 0);
  if (!passwd)
    fuzz_check (!*user_part || numeric);
  if (!passwd && !colon)
    fuzz_check (gid == 0);
  if (!group)
    fuzz_check (groups->len == 0);
  for (guint i = 0; i < groups->len; i++)
    {
      fuzz_check (g_array_index (groups, guint32, i) <= G_MAXINT32);
      for (guint j = 0; j < i; j++)
        fuzz_check (g_array_index (groups, guint32, i) != g_array_index (groups, guint32, j));
    }
  g_array_unref (groups);
}

static void
summarise_strv (GString *summary, const char *label, GStrv strv)
{
  g_string_append_printf (summary, " %s", label);
  for (guint i = 0; strv && strv[i]; i++)
    {
      g_autofree char *escaped = g_strescape (strv[i], NULL);
      g_string_append_printf (summary, " '%s'", escaped);
    }
}

/* Resolves @arch and checks the image; returns what happened, for
 * comparing the two orders. */
static char *
resolve_and_check (AirlockImageSource *source, AirlockArch arch, const char *reference,
                   gboolean docker, GHashTable *digests, GArray *arches, const FuzzIntakeInput *in,
                   guint64 *rng)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImage) image = airlock_image_resolve (source, arch, &error);
  g_autofree char *label = g_strdup_printf ("linux/%s", airlock_arch_to_string (arch));
  g_autofree char *variant = NULL;
  GString *summary = g_string_new (NULL);

  fuzz_check ((image == NULL) == (error != NULL));
  if (!image)
    {
      check_error (error, reference);
      g_string_append_printf (summary, "error %d %s", error->code, error->message);
      return g_string_free (summary, FALSE);
    }

  fuzz_check (image->arch == arch);
  fuzz_check (g_str_equal (image->reference, reference));
  /* platform_is_arch(): amd64 with no variant or v1, arm64 with none or v8 */
  variant = g_strconcat (label, arch == AIRLOCK_ARCH_AMD64 ? "/v1" : "/v8", NULL);
  fuzz_check (g_str_equal (image->platform, label) || g_str_equal (image->platform, variant));
  if (arches)
    fuzz_check (arch_listed (arches, arch));

  fuzz_check (is_digest (image->manifest_digest) && is_digest (image->config_digest));
  fuzz_check (g_hash_table_contains (digests, image->config_digest + 7));
  if (!docker)
    fuzz_check (g_hash_table_contains (digests, image->manifest_digest + 7));
  if (image->index_digest)
    {
      fuzz_check (!docker);
      fuzz_check (is_digest (image->index_digest));
      fuzz_check (g_hash_table_contains (digests, image->index_digest + 7));
    }
  fuzz_check (image->layers != NULL && image->layers->len <= 1000);
  g_string_append_printf (summary, "ok %s %s %s %s", image->platform, image->manifest_digest,
                          image->config_digest, image->index_digest ? image->index_digest : "-");
  for (guint i = 0; i < image->layers->len; i++)
    {
      const AirlockImageLayer *layer = image->layers->pdata[i];
      const char *mt = layer->media_type;

      fuzz_check (is_digest (layer->digest));
      fuzz_check (mt != NULL);
      /* the media type table of source.c: …tar, …tar+gzip / …tar.gzip, …tar+zstd */
      fuzz_check (layer->compression != AIRLOCK_LAYER_PLAIN || g_str_has_suffix (mt, ".tar"));
      fuzz_check (layer->compression != AIRLOCK_LAYER_GZIP
                  || g_str_has_suffix (mt, "+gzip") || g_str_has_suffix (mt, ".tar.gzip"));
      fuzz_check (layer->compression != AIRLOCK_LAYER_ZSTD || g_str_has_suffix (mt, "+zstd"));
      fuzz_check (layer->compression == AIRLOCK_LAYER_PLAIN
                  || layer->compression == AIRLOCK_LAYER_GZIP
                  || layer->compression == AIRLOCK_LAYER_ZSTD);
      if (docker)
        fuzz_check (layer->compression == AIRLOCK_LAYER_PLAIN);
      g_string_append_printf (summary, " layer %s %" G_GUINT64_FORMAT " %s", layer->digest,
                              layer->size, airlock_layer_compression_to_string (layer->compression));
      if (i < FUZZ_INTAKE_LAYERS_READ)
        check_layer_read (source, layer, reference, rng);
    }
  summarise_strv (summary, "entrypoint", image->entrypoint);
  summarise_strv (summary, "cmd", image->cmd);
  summarise_strv (summary, "env", image->env);
  g_string_append_printf (summary, " wd %s user %s", image->working_dir ? image->working_dir : "-",
                          image->user ? image->user : "-");
  /* empty means unset, as in docker */
  fuzz_check (!image->working_dir || *image->working_dir);
  fuzz_check (!image->user || *image->user);

  check_command (image, (const char *const *) in->args);
  check_command (image, NULL);
  check_user (image->user, in->passwd, in->group);
  check_user (image->user, NULL, NULL);
  return g_string_free (summary, FALSE);
}

static void
exercise (const char *reference, gboolean docker, GHashTable *digests, const FuzzIntakeInput *in,
          guint64 seed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) first = airlock_image_source_open (reference, &error);
  g_autoptr (AirlockImageSource) second = NULL;
  g_autoptr (GArray) arches_first = NULL;
  g_autoptr (GArray) arches_second = NULL;
  g_autofree char *list_first = NULL;
  g_autofree char *list_second = NULL;
  char *resolved_first[AIRLOCK_N_ARCHES], *resolved_second[AIRLOCK_N_ARCHES];
  guint64 rng = seed;

  fuzz_check ((first == NULL) == (error != NULL));
  if (!first)
    {
      check_error (error, reference);
      return;
    }
  fuzz_check (g_str_equal (airlock_image_source_get_reference (first), reference));
  second = airlock_image_source_open (reference, &error);
  fuzz_check (second != NULL);

  list_first = list_and_check (first, reference, &arches_first);
  for (guint a = 0; a < AIRLOCK_N_ARCHES; a++)
    resolved_first[a] = resolve_and_check (first, (AirlockArch) a, reference, docker, digests,
                                           arches_first, in, &rng);
  for (guint a = 0; a < AIRLOCK_N_ARCHES; a++)
    resolved_second[a] = resolve_and_check (second, (AirlockArch) a, reference, docker, digests,
                                            NULL, in, &rng);
  list_second = list_and_check (second, reference, &arches_second);

  fuzz_check (g_str_equal (list_first, list_second));
  for (guint a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      if (arches_second && g_str_has_prefix (resolved_second[a], "ok "))
        fuzz_check (arch_listed (arches_second, (AirlockArch) a));
      fuzz_check (g_str_equal (resolved_first[a], resolved_second[a]));
      g_free (resolved_first[a]);
      g_free (resolved_second[a]);
    }
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint64 seed = fuzz_input_hash (data, size);
  g_autoptr (FuzzIntakeInput) in = fuzz_intake_parse (data, size);
  g_autoptr (GBytes) archive = fuzz_intake_archive (in->files);
  g_autoptr (FuzzIntakeInput) none = fuzz_intake_parse (NULL, 0);
  g_autoptr (GHashTable) digests = NULL;
  g_autoptr (GHashTable) raw_digests = NULL;
  g_autofree char *reference = NULL;
  g_autofree char *raw_oci = NULL;
  g_autofree char *raw_docker = NULL;
  gsize archive_size;
  const guint8 *archive_data = g_bytes_get_data (archive, &archive_size);
  const char *path;

  /* The input as an image. */
  path = mem_file_put (&structured_file, archive_data, archive_size);
  digests = archive_digests (archive_data, archive_size);
  reference = in->tag ? g_strdup_printf ("%s:%s:%s", in->transport, path, in->tag)
                      : g_strdup_printf ("%s:%s", in->transport, path);
  exercise (reference, g_str_equal (in->transport, "docker-archive"), digests, in, seed);

  /* The input as an archive. */
  path = mem_file_put (&raw_file, data, size);
  raw_digests = archive_digests (data, size);
  raw_oci = g_strconcat ("oci-archive:", path, NULL);
  raw_docker = g_strconcat ("docker-archive:", path, NULL);
  exercise (raw_oci, FALSE, raw_digests, none, seed);
  exercise (raw_docker, TRUE, raw_digests, none, seed);
  return 0;
}
