/* Writes the seed corpora of fuzz-intake and fuzz-layer
 * (tests/fuzz/corpus/intake/, tests/fuzz/corpus/layer/).
 *
 *   gen-image-corpus intake|layer DIR           write the seeds into DIR
 *   gen-image-corpus --check intake|layer DIR   exit 1 unless DIR holds
 *                                               exactly them
 *
 * intake: images in the text form of fuzz-intake.h (every layout and
 * reference form the intake takes, then one input stopping at each check
 * source.c makes), and a few as the archive itself.  layer: layer tars
 * (every entry kind, whiteouts across two layers, each unsafe entry),
 * and tars as gzip and zstd streams, well-formed and broken.  The
 * compressed seeds are written here with stored deflate blocks and raw
 * zstd blocks, so they do not change with the zlib or zstd version.
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-intake.h"
#include "corpus-seed.h"

/* ---- intake: images as text ----------------------------------------------- */

#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_LAYER "application/vnd.oci.image.layer.v1.tar"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define MT_DOCKER_LAYER "application/vnd.docker.image.rootfs.diff.tar.gzip"

#define FILE_(name) "\n--- " name "\n"
/* A descriptor of file N (its digest and size filled in by the harness). */
#define ENTRY(mt, n, extra) \
  "{\"mediaType\":\"" mt "\",\"digest\":\"sha256:$" #n "\",\"size\":#" #n extra "}"
#define PLATFORM(arch) ",\"platform\":{\"architecture\":\"" arch "\",\"os\":\"linux\"}"
#define PLATFORM_V(arch, v) \
  ",\"platform\":{\"architecture\":\"" arch "\",\"os\":\"linux\",\"variant\":\"" v "\"}"
#define TAG(name) ",\"annotations\":{\"org.opencontainers.image.ref.name\":\"" name "\"}"
#define INDEX(entries) \
  "{\"schemaVersion\":2,\"mediaType\":\"" MT_INDEX "\",\"manifests\":[" entries "]}"
#define MANIFEST_OF(mt, config, layers) \
  "{\"schemaVersion\":2,\"mediaType\":\"" mt "\",\"config\":" config ",\"layers\":[" layers "]}"
#define MANIFEST(config_n, layers) MANIFEST_OF (MT_MANIFEST, ENTRY (MT_CONFIG, config_n, ""), layers)
#define CONFIG_OF(platform, run, diff_ids) \
  "{" platform ",\"config\":{" run "},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[" diff_ids "]}}"
#define CONFIG(arch, run, diff_ids) \
  CONFIG_OF ("\"architecture\":\"" arch "\",\"os\":\"linux\"", run, diff_ids)
#define RUN \
  "\"Entrypoint\":[\"/bin/sh\",\"-c\"],\"Cmd\":[\"echo hello\"],\"Env\":[\"PATH=/usr/bin:/bin\"]," \
  "\"WorkingDir\":\"/srv\",\"User\":\"nobody\""
#define BLOB(n) FILE_ ("blobs/sha256/$" #n)

/* One amd64 image: index.json (1), manifest (2), config (3), layer (4). */
#define SINGLE(run) \
  FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64"))) \
  BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 4, "")) \
  BLOB (3) CONFIG ("amd64", run, "\"sha256:$4\"") \
  BLOB (4) "layer bytes"

#define ETC_FILES \
  FILE_ ("/etc/passwd") "root:x:0:0:root:/root:/bin/sh\n# a comment\napp:x:1000:1000::/home/app:/bin/sh\n" \
                        "broken line\nbig:x:2147483648:0::/:/bin/sh" \
  FILE_ ("/etc/group") "root:x:0:\nstaff:x:50:app\nwheel:x:10:app,root\napp:x:1000:\ndup:x:50:app"

/* Two tagged images: index.json (1), then manifest, config, layer each. */
#define TWO_TAGGED \
  FILE_ ("index.json") \
  INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64") TAG ("latest")) "," \
         ENTRY (MT_MANIFEST, 5, PLATFORM ("amd64") TAG ("old"))) \
  BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 4, "")) \
  BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\"") \
  BLOB (4) "new layer" \
  BLOB (5) MANIFEST (6, ENTRY (MT_LAYER, 7, "")) \
  BLOB (6) CONFIG ("amd64", RUN, "\"sha256:$7\"") \
  BLOB (7) "old layer"

/* docker save of two images: manifest.json (1), then config, layer each. */
#define DOCKER_TWO \
  FILE_ ("manifest.json") \
  "[{\"Config\":\"$2.json\",\"RepoTags\":[\"app:v1\"],\"Layers\":[\"$3/layer.tar\"]}," \
  "{\"Config\":\"$4.json\",\"RepoTags\":[\"app:v2\",\"app:latest\"],\"Layers\":[\"$5/layer.tar\"]}]" \
  FILE_ ("$2.json") CONFIG ("amd64", RUN, "\"sha256:$3\"") \
  FILE_ ("$3/layer.tar") "v1 layer" \
  FILE_ ("$4.json") CONFIG ("arm64", RUN, "\"sha256:$5\"") \
  FILE_ ("$5/layer.tar") "v2 layer"

typedef struct {
  const char *name;
  const char *text;
} TextSeed;

static const TextSeed intake_seeds[] = {
  /* every layout and reference form */
  { "oci-single",
    "oci-archive" FILE_ ("oci-layout") "{\"imageLayoutVersion\":\"1.0.0\"}"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 3, PLATFORM ("amd64")))
    BLOB (3) MANIFEST (4, ENTRY (MT_LAYER, 5, ""))
    BLOB (4) CONFIG ("amd64", RUN, "\"sha256:$5\"")
    BLOB (5) "layer bytes\n" },
  { "oci-multi-arch",
    "oci-archive"
    FILE_ ("index.json")
    INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")) ","
           ENTRY (MT_MANIFEST, 4, PLATFORM_V ("arm64", "v8")) ","
           ENTRY (MT_MANIFEST, 6, PLATFORM ("s390x")))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 8, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$8\"")
    BLOB (4) MANIFEST (5, ENTRY (MT_LAYER, 8, ""))
    BLOB (5) CONFIG_OF ("\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\"", RUN,
                        "\"sha256:$8\"")
    BLOB (6) MANIFEST (7, ENTRY (MT_LAYER, 8, ""))
    BLOB (7) CONFIG ("s390x", RUN, "\"sha256:$8\"")
    BLOB (8) "shared layer" },
  { "oci-nested-index",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_INDEX, 2, ""))
    BLOB (2) INDEX (ENTRY (MT_MANIFEST, 3, PLATFORM ("amd64")) ","
                    ENTRY (MT_MANIFEST, 5, PLATFORM ("arm64")))
    BLOB (3) MANIFEST (4, ENTRY (MT_LAYER, 7, ""))
    BLOB (4) CONFIG ("amd64", RUN, "\"sha256:$7\"")
    BLOB (5) MANIFEST (6, ENTRY (MT_LAYER, 7, ""))
    BLOB (6) CONFIG ("arm64", RUN, "\"sha256:$7\"")
    BLOB (7) "layer" },
  { "oci-no-platform",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, ""))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 4, ""))
    BLOB (3) CONFIG_OF ("\"architecture\":\"arm64\",\"os\":\"linux\",\"variant\":\"v8\"", RUN,
                        "\"sha256:$4\"")
    BLOB (4) "layer" },
  { "oci-tagged", "oci-archive:latest" TWO_TAGGED },
  { "oci-tag-missing", "oci-archive:v9" TWO_TAGGED },
  { "oci-several-images", "oci-archive" TWO_TAGGED },
  { "oci-attestation",
    "oci-archive"
    FILE_ ("index.json")
    INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")) ","
           ENTRY (MT_MANIFEST, 5, PLATFORM ("unknown")
                  ",\"annotations\":{\"vnd.docker.reference.type\":\"attestation-manifest\"}"))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 4, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\"")
    BLOB (4) "layer"
    BLOB (5) "{}" },
  { "oci-user-group",
    "oci-archive"
    SINGLE ("\"Entrypoint\":[\"/app\"],\"Cmd\":[\"--serve\"],\"Env\":[\"A=1\",\"B=\"],"
            "\"WorkingDir\":\"/home/app\",\"User\":\"app:staff\"")
    ETC_FILES FILE_ ("/args") "--port\n8080" },
  { "oci-user-name",
    "oci-archive"
    SINGLE ("\"Entrypoint\":null,\"Cmd\":[\"/bin/true\"],\"User\":\"app\"") ETC_FILES
    FILE_ ("/args") "" },
  { "oci-user-numeric",
    "oci-archive" SINGLE ("\"Cmd\":[\"id\"],\"User\":\"1000:50\"") ETC_FILES },
  /* empty /etc files: no data pointer at all (user.c crashed on them) */
  { "oci-etc-files-empty",
    "oci-archive" SINGLE ("\"Cmd\":[\"id\"],\"User\":\"app:staff\"")
    FILE_ ("/etc/passwd") "" FILE_ ("/etc/group") "" },
  { "oci-user-bad",
    "oci-archive" SINGLE ("\"Cmd\":[\"id\"],\"User\":\"app:\"") ETC_FILES },
  { "oci-docker-media-types",
    "oci-archive"
    FILE_ ("index.json")
    "{\"schemaVersion\":2,\"mediaType\":\"" MT_DOCKER_LIST "\",\"manifests\":["
    ENTRY (MT_DOCKER_MANIFEST, 2, PLATFORM ("amd64")) "]}"
    BLOB (2) MANIFEST_OF (MT_DOCKER_MANIFEST, ENTRY (MT_DOCKER_CONFIG, 3, ""),
                          ENTRY (MT_DOCKER_LAYER, 4, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\"")
    BLOB (4) "not gzip" },
  { "oci-layer-types",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER "+zstd", 4, "") ","
                          ENTRY ("application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", 5, "") ","
                          ENTRY ("application/vnd.docker.image.rootfs.diff.tar", 6, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\",\"sha256:$5\",\"sha256:$6\"")
    BLOB (4) "(\xb5/\xfd"
    BLOB (5) "\x1f\x8b\x08"
    BLOB (6) "plain" },
  { "docker-archive", "docker-archive"
    FILE_ ("manifest.json")
    "[{\"Config\":\"$2.json\",\"RepoTags\":[\"app:v1\"],\"Layers\":[\"$3/layer.tar\"]}]"
    FILE_ ("$2.json") CONFIG ("amd64", RUN, "\"sha256:$3\"")
    FILE_ ("$3/layer.tar") "layer" },
  { "docker-archive-linked-layers", "docker-archive"
    FILE_ ("manifest.json")
    "[{\"Config\":\"$2.json\",\"Layers\":[\"$3/layer.tar\",\"dup/layer.tar\",\"hard/layer.tar\"]}]"
    FILE_ ("$2.json") CONFIG ("amd64", RUN, "\"sha256:$3\",\"sha256:$3\",\"sha256:$3\"")
    FILE_ ("$3/layer.tar") "layer"
    FILE_ ("dup/layer.tar -> ../$3/layer.tar") ""
    FILE_ ("hard/layer.tar => $3/layer.tar") "" },
  { "docker-archive-tagged", "docker-archive:app:latest" DOCKER_TWO },
  { "docker-archive-index", "docker-archive:@1" DOCKER_TWO },
  { "docker-archive-several", "docker-archive" DOCKER_TWO },
  { "docker-archive-blobs", "docker-archive"
    FILE_ ("manifest.json")
    "[{\"Config\":\"blobs/sha256/$2\",\"Layers\":[\"blobs/sha256/$3\"]}]"
    BLOB (2) CONFIG_OF ("\"architecture\":\"amd64\",\"os\":\"linux\"", "\"Entrypoint\":[\"/x\"]",
                        "\"sha256:$3\"")
    BLOB (3) "layer" },

  /* one per check: each stops where source.c refuses */
  { "bad-transport", "oci" SINGLE (RUN) },
  { "oci-no-index", "oci-archive" FILE_ ("oci-layout") "{}" },
  { "oci-index-array", "oci-archive" FILE_ ("index.json") "[]" },
  { "oci-index-not-json", "oci-archive" FILE_ ("index.json") "{\"schemaVersion\":2," },
  { "oci-schema-1", "oci-archive" FILE_ ("index.json") "{\"schemaVersion\":1,\"manifests\":[]}" },
  { "oci-index-empty", "oci-archive" FILE_ ("index.json") "{\"schemaVersion\":2,\"manifests\":[]}" },
  { "oci-entry-not-object", "oci-archive" FILE_ ("index.json") "{\"schemaVersion\":2,\"manifests\":[1]}" },
  { "oci-index-link-loop", "oci-archive" FILE_ ("index.json -> a") "" FILE_ ("a -> index.json") "" },
  { "oci-digest-mismatch",
    "oci-archive"
    FILE_ ("index.json")
    INDEX ("{\"mediaType\":\"" MT_MANIFEST "\",\"digest\":\"sha256:$3\",\"size\":#2" PLATFORM ("amd64") "}")
    FILE_ ("blobs/sha256/$3") MANIFEST (4, "")
    FILE_ ("unused") "{\"schemaVersion\":2,\"config\":{}}"
    BLOB (4) CONFIG ("amd64", RUN, "") },
  { "oci-size-mismatch",
    "oci-archive"
    FILE_ ("index.json")
    INDEX ("{\"mediaType\":\"" MT_MANIFEST "\",\"digest\":\"sha256:$2\",\"size\":#3" PLATFORM ("amd64") "}")
    BLOB (2) MANIFEST (3, "")
    BLOB (3) CONFIG ("amd64", RUN, "") },
  { "oci-sha512",
    "oci-archive"
    FILE_ ("index.json")
    INDEX ("{\"mediaType\":\"" MT_MANIFEST "\",\"digest\":\"sha512:$2$2\",\"size\":#2}")
    BLOB (2) "{}" },
  { "oci-digest-uppercase",
    "oci-archive"
    FILE_ ("index.json")
    INDEX ("{\"mediaType\":\"" MT_MANIFEST "\",\"digest\":\"sha256:ABCDEF\",\"size\":2}") },
  { "oci-manifest-type-mismatch",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_DOCKER_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST (3, "")
    BLOB (3) CONFIG ("amd64", RUN, "") },
  { "oci-artifact",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST_OF (MT_MANIFEST, ENTRY ("application/vnd.oci.empty.v1+json", 3, ""), "")
    BLOB (3) "{}" },
  { "oci-unknown-layer-type",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER "+lz4", 4, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\"")
    BLOB (4) "layer" },
  { "oci-config-other-arch",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST (3, "")
    BLOB (3) CONFIG ("arm64", RUN, "") },
  { "oci-config-no-arch",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, ""))
    BLOB (2) MANIFEST (3, "")
    BLOB (3) "{\"os\":\"linux\",\"rootfs\":{\"diff_ids\":[]}}" },
  { "oci-nested-too-deep",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_INDEX, 2, ""))
    BLOB (2) INDEX (ENTRY (MT_INDEX, 3, ""))
    BLOB (3) INDEX (ENTRY (MT_INDEX, 4, ""))
    BLOB (4) INDEX (ENTRY (MT_INDEX, 5, ""))
    BLOB (5) INDEX (ENTRY (MT_INDEX, 6, ""))
    BLOB (6) INDEX ("") },
  { "oci-strings-not-strings",
    "oci-archive" SINGLE ("\"Entrypoint\":[1,2],\"Cmd\":\"sh\"") },
  { "oci-no-command", "oci-archive" SINGLE ("\"Env\":[\"A=1\"],\"WorkingDir\":\"\",\"User\":\"\"") },
  { "oci-diff-ids-mismatch",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 4, "") "," ENTRY (MT_LAYER, 4, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\"")
    BLOB (4) "layer" },
  { "oci-layer-digest-mismatch",
    "oci-archive"
    FILE_ ("index.json") INDEX (ENTRY (MT_MANIFEST, 2, PLATFORM ("amd64")))
    BLOB (2) MANIFEST (3, ENTRY (MT_LAYER, 4, ""))
    BLOB (3) CONFIG ("amd64", RUN, "\"sha256:$4\"")
    FILE_ ("blobs/sha256/$5") "layer-one\n"
    FILE_ ("blobs/sha256/$4") "layer-two\n" },
  { "oci-duplicate-file",
    "oci-archive" SINGLE (RUN) FILE_ ("./index.json") "{}" },
  { "docker-archive-no-manifest", "docker-archive" FILE_ ("index.json") "{}" },
  { "docker-archive-bad-config-name", "docker-archive"
    FILE_ ("manifest.json") "[{\"Config\":\"config.json\",\"Layers\":[]}]"
    FILE_ ("config.json") "{}" },
  { "docker-archive-missing-layer", "docker-archive"
    FILE_ ("manifest.json") "[{\"Config\":\"$2.json\",\"Layers\":[\"nope.tar\"]}]"
    FILE_ ("$2.json") CONFIG ("amd64", RUN, "\"sha256:0000000000000000000000000000000000000000000000000000000000000000\"") },
  { "docker-archive-layer-digest", "docker-archive"
    FILE_ ("manifest.json") "[{\"Config\":\"$2.json\",\"Layers\":[\"layer.tar\"]}]"
    FILE_ ("$2.json") CONFIG ("amd64", RUN, "\"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"")
    FILE_ ("layer.tar") "layer" },
};

/* The same images as the archive itself (the harness also reads its input
 * as an archive). */
static const struct {
  const char *name;
  const char *from;           /* an intake_seeds name */
  gboolean gzip;
} archive_seeds[] = {
  { "raw-oci-archive", "oci-single", FALSE },
  { "raw-oci-archive-gzip", "oci-multi-arch", TRUE },
  { "raw-docker-archive", "docker-archive-linked-layers", FALSE },
};

/* ---- compression by hand: stored deflate, raw zstd blocks ---------------- */

static guint32
crc32_of (const guint8 *data, gsize len)
{
  guint32 crc = 0xffffffffu;

  for (gsize i = 0; i < len; i++)
    {
      crc ^= data[i];
      for (int k = 0; k < 8; k++)
        crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
    }
  return ~crc;
}

static void
put_le16 (GByteArray *out, guint16 v)
{
  guint8 b[2] = { (guint8) v, (guint8) (v >> 8) };

  g_byte_array_append (out, b, 2);
}

static void
put_le32 (GByteArray *out, guint32 v)
{
  guint8 b[4] = { (guint8) v, (guint8) (v >> 8), (guint8) (v >> 16), (guint8) (v >> 24) };

  g_byte_array_append (out, b, 4);
}

/* One gzip member (RFC 1952) of stored deflate blocks. */
static void
gzip_stored (GByteArray *out, const guint8 *data, gsize len)
{
  static const guint8 header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
  gsize pos = 0;

  g_byte_array_append (out, header, sizeof header);
  do
    {
      gsize n = MIN (len - pos, 65535);
      guint8 final = pos + n == len;

      g_byte_array_append (out, &final, 1);
      put_le16 (out, (guint16) n);
      put_le16 (out, (guint16) ~n);
      g_byte_array_append (out, data + pos, (guint) n);
      pos += n;
    }
  while (pos < len);
  put_le32 (out, crc32_of (data, len));
  put_le32 (out, (guint32) len);
}

/* One zstd frame (RFC 8878) of raw blocks: no content size, a 128 KiB
 * window, no checksum. */
static void
zstd_raw (GByteArray *out, const guint8 *data, gsize len)
{
  static const guint8 header[6] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3 };
  gsize pos = 0;

  g_byte_array_append (out, header, sizeof header);
  do
    {
      gsize n = MIN (len - pos, 128 * 1024);
      guint32 block = (guint32) n << 3 | (pos + n == len ? 1 : 0);
      guint8 b[3] = { (guint8) block, (guint8) (block >> 8), (guint8) (block >> 16) };

      g_byte_array_append (out, b, 3);
      g_byte_array_append (out, data + pos, (guint) n);
      pos += n;
    }
  while (pos < len);
}

/* ---- layer tars ------------------------------------------------------------ */

typedef struct {
  char type;        /* f file, d dir, l symlink, h hard link, c char device, p fifo, x file + xattr */
  const char *path;
  const char *data; /* file content, link target */
} TarEntry;

static la_ssize_t
append_cb (struct archive *a, void *user_data, const void *buffer, size_t length)
{
  g_byte_array_append (user_data, buffer, (guint) length);
  return (la_ssize_t) length;
}

/* A tar of @entries (ending with { 0 }), as the layer tools write one. */
static void
put_tar (GByteArray *out, const TarEntry *entries)
{
  struct archive *a = archive_write_new ();

  archive_write_set_format_pax_restricted (a);
  archive_write_set_bytes_per_block (a, 512);
  archive_write_set_bytes_in_last_block (a, 1);
  g_assert (archive_write_open (a, out, NULL, append_cb, NULL) == ARCHIVE_OK);
  for (const TarEntry *t = entries; t->type; t++)
    {
      struct archive_entry *e = archive_entry_new ();
      gsize n = t->data && (t->type == 'f' || t->type == 'x') ? strlen (t->data) : 0;

      archive_entry_copy_pathname (e, t->path);
      archive_entry_set_perm (e, t->type == 'd' ? 0755 : 0644);
      archive_entry_set_uid (e, 1000);
      archive_entry_set_gid (e, 1000);
      switch (t->type)
        {
        case 'd': archive_entry_set_filetype (e, AE_IFDIR); break;
        case 'l':
          archive_entry_set_filetype (e, AE_IFLNK);
          archive_entry_copy_symlink (e, t->data);
          break;
        case 'h':
          archive_entry_set_filetype (e, AE_IFREG);
          archive_entry_copy_hardlink (e, t->data);
          break;
        case 'c':
          archive_entry_set_filetype (e, AE_IFCHR);
          archive_entry_set_rdevmajor (e, 1);
          archive_entry_set_rdevminor (e, 3);
          break;
        case 'p': archive_entry_set_filetype (e, AE_IFIFO); break;
        case 'x':
          archive_entry_xattr_add_entry (e, "user.airlock", "seed", 4);
          /* fall through */
        default:
          archive_entry_set_filetype (e, AE_IFREG);
          archive_entry_set_size (e, (la_int64_t) n);
        }
      g_assert (archive_write_header (a, e) == ARCHIVE_OK);
      if (n)
        g_assert (archive_write_data (a, t->data, n) == (la_ssize_t) n);
      archive_entry_free (e);
    }
  g_assert (archive_write_close (a) == ARCHIVE_OK);
  archive_write_free (a);
}

static const TarEntry tar_basic[] = {
  { 'd', "./", NULL },
  { 'd', "etc/", NULL },
  { 'f', "etc/passwd", "root:x:0:0:root:/root:/bin/sh\n" },
  { 'd', "usr/bin/", NULL },
  { 'f', "usr/bin/sh", "#!binary\n" },
  { 'h', "usr/bin/ash", "usr/bin/sh" },
  { 'l', "bin", "usr/bin" },
  { 'l', "etc/mtab", "/proc/self/mounts" },
  { 'c', "dev/null", NULL },
  { 'p', "run/fifo", NULL },
  { 'x', "etc/xattr", "x" },
  { 0 },
};
static const TarEntry tar_dot_paths[] = {
  { 'f', "./a", "a" },
  { 'f', "./b//c/./d", "d" },
  { 'd', "b/c/", NULL },
  { 'l', "./e/", "." },
  { 'h', "f", "./b/c//d" },
  { 0 },
};
static const TarEntry tar_lower[] = {
  { 'd', "a/", NULL },
  { 'f', "a/x", "x" },
  { 'f', "a/y", "y" },
  { 'd', "a/sub/", NULL },
  { 'f', "a/sub/z", "z" },
  { 'f', "b", "b" },
  { 'd', "d/", NULL },
  { 'f', "d/f", "f" },
  { 'l', "l", "a" },
  { 0 },
};
static const TarEntry tar_whiteouts[] = {
  { 'f', "a/.wh.x", NULL },
  { 'f', ".wh.b", NULL },
  { 'f', "a/sub/.wh..wh..opq", NULL },
  { 'f', "a/sub/new", "new" },
  { 'f', ".wh..wh.plnk", NULL },
  { 'f', "b", "b again" },
  { 0 },
};
static const TarEntry tar_retype[] = {
  { 'f', "d", "now a file" },
  { 'd', "a/x/", NULL },
  { 'f', "l", "no longer a symlink" },
  { 0 },
};
static const TarEntry tar_root_opaque[] = {
  { 'f', ".wh..wh..opq", NULL },
  { 'f', "only", "only this" },
  { 0 },
};
static const TarEntry tar_whiteout_through_symlink[] = {
  { 'f', "l/.wh.x", NULL },
  { 0 },
};
static const TarEntry tar_link_to_lower[] = {
  { 'h', "hard", "a/y" },
  { 'h', "to-symlink", "l" },
  { 0 },
};
static const TarEntry tar_absolute[] = { { 'f', "/etc/passwd", "x" }, { 0 } };
static const TarEntry tar_dotdot[] = { { 'f', "a/../../etc/passwd", "x" }, { 0 } };
static const TarEntry tar_through_symlink[] = {
  { 'l', "s", "/etc" },
  { 'f', "s/passwd", "x" },
  { 0 },
};
static const TarEntry tar_hardlink_dotdot[] = { { 'f', "a", "a" }, { 'h', "b", "../a" }, { 0 } };
static const TarEntry tar_hardlink_absolute[] = { { 'h', "b", "/etc/shadow" }, { 0 } };
static const TarEntry tar_hardlink_missing[] = { { 'h', "b", "nothing" }, { 0 } };
static const TarEntry tar_hardlink_to_dir[] = { { 'd', "d/", NULL }, { 'h', "b", "d" }, { 0 } };
static const TarEntry tar_hardlink_through_symlink[] = {
  { 'l', "s", "/" },
  { 'h', "b", "s/etc/shadow" },
  { 0 },
};
static const TarEntry tar_whiteout_empty[] = { { 'f', "a/.wh.", NULL }, { 0 } };
static const TarEntry tar_whiteout_dotdot[] = { { 'f', "a/.wh...", NULL }, { 0 } };
static const TarEntry tar_retyped_in_layer[] = { { 'f', "x", "x" }, { 'd', "x/", NULL }, { 0 } };
static const TarEntry tar_under_file[] = { { 'f', "f", "f" }, { 'f', "f/g", "g" }, { 0 } };
static const TarEntry tar_root_not_dir[] = { { 'f', ".", "root" }, { 0 } };
static const TarEntry tar_root_symlink[] = { { 'l', "./", "/" }, { 0 } };

/* The long path is built at run time. */
static TarEntry tar_long_path[2];

typedef enum {
  PLAIN,
  GZIP,
  GZIP_TWO_MEMBERS,
  GZIP_TRAILING_GARBAGE,
  GZIP_TRUNCATED,
  GZIP_BAD_CRC,
  ZSTD,
  ZSTD_TWO_FRAMES,
  ZSTD_TRUNCATED,
  TAR_TRUNCATED,
  TAR_BAD_CHECKSUM,
} Encoding;

static const struct {
  const char *name;
  const TarEntry *layers[3];
  Encoding encoding;
} layer_seeds[] = {
  { "basic", { tar_basic }, PLAIN },
  { "dot-paths", { tar_dot_paths }, PLAIN },
  { "whiteouts", { tar_lower, tar_whiteouts }, PLAIN },
  { "retype", { tar_lower, tar_retype }, PLAIN },
  { "root-opaque", { tar_lower, tar_root_opaque }, PLAIN },
  { "link-to-lower", { tar_lower, tar_link_to_lower }, PLAIN },
  { "three-layers", { tar_lower, tar_whiteouts, tar_retype }, PLAIN },
  { "unsafe-whiteout-through-symlink", { tar_lower, tar_whiteout_through_symlink }, PLAIN },
  { "unsafe-absolute", { tar_absolute }, PLAIN },
  { "unsafe-dotdot", { tar_dotdot }, PLAIN },
  { "unsafe-through-symlink", { tar_through_symlink }, PLAIN },
  { "unsafe-hardlink-dotdot", { tar_hardlink_dotdot }, PLAIN },
  { "unsafe-hardlink-absolute", { tar_hardlink_absolute }, PLAIN },
  { "unsafe-hardlink-through-symlink", { tar_hardlink_through_symlink }, PLAIN },
  { "unsafe-whiteout-empty", { tar_whiteout_empty }, PLAIN },
  { "unsafe-whiteout-dotdot", { tar_whiteout_dotdot }, PLAIN },
  { "hardlink-missing", { tar_hardlink_missing }, PLAIN },
  { "hardlink-to-dir", { tar_hardlink_to_dir }, PLAIN },
  { "retyped-in-layer", { tar_retyped_in_layer }, PLAIN },
  { "under-file", { tar_under_file }, PLAIN },
  { "root-not-dir", { tar_root_not_dir }, PLAIN },
  { "root-symlink", { tar_root_symlink }, PLAIN },
  { "long-path", { tar_long_path }, PLAIN },
  { "tar-truncated", { tar_basic }, TAR_TRUNCATED },
  { "tar-bad-checksum", { tar_basic }, TAR_BAD_CHECKSUM },
  { "gzip", { tar_basic }, GZIP },
  { "gzip-whiteouts", { tar_lower, tar_whiteouts }, GZIP },
  { "gzip-two-members", { tar_basic }, GZIP_TWO_MEMBERS },
  { "gzip-trailing-garbage", { tar_basic }, GZIP_TRAILING_GARBAGE },
  { "gzip-truncated", { tar_basic }, GZIP_TRUNCATED },
  { "gzip-bad-crc", { tar_basic }, GZIP_BAD_CRC },
  { "zstd", { tar_basic }, ZSTD },
  { "zstd-two-frames", { tar_lower, tar_whiteouts }, ZSTD_TWO_FRAMES },
  { "zstd-truncated", { tar_basic }, ZSTD_TRUNCATED },
};

/* Bytes no tar writer makes, as they are. */
static const struct {
  const char *name;
  const char *bytes;
  gsize len;
} raw_layer_seeds[] = {
  /* Too short for a header: with a wrong digest, libarchive took the
   * failed read ahead for an empty archive, and layer.c read on into a
   * GError it had set already. */
  { "short-not-tar", "b\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 18 },
  { "empty", "", 0 },
  { "end-of-archive-only", NULL, 1024 },
};

static GByteArray *
build_raw_layer_seed (guint i)
{
  GByteArray *out = g_byte_array_new ();

  if (raw_layer_seeds[i].bytes)
    g_byte_array_append (out, (const guint8 *) raw_layer_seeds[i].bytes,
                         (guint) raw_layer_seeds[i].len);
  else
    {
      /* NULL: that many zero bytes */
      g_byte_array_set_size (out, (guint) raw_layer_seeds[i].len);
      memset (out->data, 0, out->len);
    }
  return out;
}

static GByteArray *
build_layer_seed (guint i)
{
  GByteArray *tar = g_byte_array_new ();
  GByteArray *out = g_byte_array_new ();
  gsize half;

  for (guint l = 0; l < G_N_ELEMENTS (layer_seeds[i].layers) && layer_seeds[i].layers[l]; l++)
    put_tar (tar, layer_seeds[i].layers[l]);
  half = tar->len / 2 / 512 * 512;
  switch (layer_seeds[i].encoding)
    {
    case PLAIN:
      g_byte_array_append (out, tar->data, tar->len);
      break;
    case TAR_TRUNCATED:
      g_byte_array_append (out, tar->data, tar->len - 700);
      break;
    case TAR_BAD_CHECKSUM:
      g_byte_array_append (out, tar->data, tar->len);
      out->data[512 + 100] ^= 0x01;   /* the second header's mode */
      break;
    case GZIP:
      gzip_stored (out, tar->data, tar->len);
      break;
    case GZIP_TWO_MEMBERS:
      gzip_stored (out, tar->data, half);
      gzip_stored (out, tar->data + half, tar->len - half);
      break;
    case GZIP_TRAILING_GARBAGE:
      gzip_stored (out, tar->data, tar->len);
      g_byte_array_append (out, (const guint8 *) "\0\0\0\0garbage", 11);
      break;
    case GZIP_TRUNCATED:
      gzip_stored (out, tar->data, tar->len);
      g_byte_array_set_size (out, out->len - 6);
      break;
    case GZIP_BAD_CRC:
      gzip_stored (out, tar->data, tar->len);
      out->data[out->len - 8] ^= 0xff;
      break;
    case ZSTD:
      zstd_raw (out, tar->data, tar->len);
      break;
    case ZSTD_TWO_FRAMES:
      zstd_raw (out, tar->data, half);
      zstd_raw (out, tar->data + half, tar->len - half);
      break;
    case ZSTD_TRUNCATED:
      zstd_raw (out, tar->data, tar->len);
      g_byte_array_set_size (out, out->len - 100);
      break;
    }
  g_byte_array_unref (tar);
  return out;
}

/* ---- writing and checking ---------------------------------------------------- */

static GByteArray *
build_intake_seed (guint i)
{
  GByteArray *out = g_byte_array_new ();

  g_byte_array_append (out, (const guint8 *) intake_seeds[i].text,
                       (guint) strlen (intake_seeds[i].text));
  return out;
}

static GByteArray *
build_archive_seed (guint i)
{
  const char *text = NULL;
  g_autoptr (FuzzIntakeInput) in = NULL;
  g_autoptr (GBytes) archive = NULL;
  GByteArray *out = g_byte_array_new ();
  gsize size;
  const guint8 *data;

  for (guint j = 0; j < G_N_ELEMENTS (intake_seeds); j++)
    if (g_str_equal (intake_seeds[j].name, archive_seeds[i].from))
      text = intake_seeds[j].text;
  g_assert (text != NULL);
  in = fuzz_intake_parse ((const guint8 *) text, strlen (text));
  archive = fuzz_intake_archive (in->files);
  data = g_bytes_get_data (archive, &size);
  if (archive_seeds[i].gzip)
    gzip_stored (out, data, size);
  else
    g_byte_array_append (out, data, (guint) size);
  return out;
}

static int
put_seed (const char *dir, const char *name, GByteArray *bytes, gboolean check, const char *self)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  int status = 0;

  status |= corpus_seed_put (path, bytes->data, bytes->len, check, self);
  g_byte_array_unref (bytes);
  return status;
}

/* With --check, a file in DIR that no seed names is stale too. */
static int
check_no_strays (const char *dir, GHashTable *names)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  int status = 0;

  while (d && (name = g_dir_read_name (d)))
    if (!g_hash_table_contains (names, name))
      {
        fprintf (stderr, "'%s' in '%s' is not a seed this program builds\n", name, dir);
        status = 1;
      }
  return status;
}

int
main (int argc, char **argv)
{
  gboolean check = argc == 4 && strcmp (argv[1], "--check") == 0;
  const char *target = check ? argv[2] : argv[1];
  const char *dir = check ? argv[3] : argv[2];
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *long_path = NULL;
  int status = 0;

  if (!(argc == 3 || check) || !(g_str_equal (target, "intake") || g_str_equal (target, "layer")))
    {
      fprintf (stderr, "usage: %s [--check] intake|layer DIR\n", argv[0]);
      return 2;
    }

  if (g_str_equal (target, "intake"))
    {
      for (guint i = 0; i < G_N_ELEMENTS (intake_seeds); i++)
        {
          g_hash_table_add (names, (gpointer) intake_seeds[i].name);
          status |= put_seed (dir, intake_seeds[i].name, build_intake_seed (i), check, argv[0]);
        }
      for (guint i = 0; i < G_N_ELEMENTS (archive_seeds); i++)
        {
          g_hash_table_add (names, (gpointer) archive_seeds[i].name);
          status |= put_seed (dir, archive_seeds[i].name, build_archive_seed (i), check, argv[0]);
        }
    }
  else
    {
      /* one byte past AIRLOCK_IMAGE_MAX_PATH (lib/image/disk-private.h) */
      long_path = g_strnfill (4097, 'p');
      for (guint i = 2; i < 4097; i += 200)
        long_path[i] = '/';
      tar_long_path[0] = (TarEntry) { 'f', long_path, "long" };
      for (guint i = 0; i < G_N_ELEMENTS (layer_seeds); i++)
        {
          g_hash_table_add (names, (gpointer) layer_seeds[i].name);
          status |= put_seed (dir, layer_seeds[i].name, build_layer_seed (i), check, argv[0]);
        }
      for (guint i = 0; i < G_N_ELEMENTS (raw_layer_seeds); i++)
        {
          g_hash_table_add (names, (gpointer) raw_layer_seeds[i].name);
          status |= put_seed (dir, raw_layer_seeds[i].name, build_raw_layer_seed (i), check,
                              argv[0]);
        }
    }
  if (check)
    status |= check_no_strays (dir, names);
  return status;
}
