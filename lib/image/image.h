/* OCI image intake: a reference in skopeo's transport syntax, resolved to
 * one manifest per arch, every blob checked against its digest and size
 * before it is used, and the image's rootfs as a cached ext4 disk built
 * with libguestfs (image content never lands on the host's filesystem).
 *
 * References:
 *   oci:DIR[:TAG]           an OCI image layout directory (index.json, blobs/)
 *   oci-archive:FILE[:TAG]  the same, as a tar archive (read in place)
 *   docker-archive:FILE     `docker save` output (manifest.json, layer tars)
 *   docker://NAME[:TAG|@DIGEST], containers-storage:NAME
 *                           a registry's or the local containers storage's
 *                           image, copied by skopeo (when installed) into an
 *                           OCI layout in the cache, named by the digest the
 *                           reference names, then read as oci: is; plain HTTP
 *                           only for a registry on loopback, with
 *                           $AIRLOCK_INSECURE_LOCAL_REGISTRY=1
 * Without a TAG, an index with exactly one manifest (or one per arch, the
 * multi-arch case) is used; several tagged entries need a TAG. */
#pragma once

#include <gio/gio.h>

#include "../airlock-macros.h"
#include "../arch.h"
#include "../paths.h"

G_BEGIN_DECLS

#define AIRLOCK_IMAGE_ERROR (airlock_image_error_quark ())
AIRLOCK_PUBLIC GQuark airlock_image_error_quark (void);

/* Each with its own exit status in the command (harness/harness.h). */
typedef enum {
  AIRLOCK_IMAGE_ERROR_REFERENCE,   /* the reference does not parse, or names nothing */
  AIRLOCK_IMAGE_ERROR_NOT_FOUND,   /* a blob, tag or file the image names is missing */
  AIRLOCK_IMAGE_ERROR_DIGEST,      /* a blob's bytes or size do not match its digest */
  AIRLOCK_IMAGE_ERROR_MALFORMED,   /* JSON, tar or compression that does not parse */
  AIRLOCK_IMAGE_ERROR_UNSUPPORTED, /* a media type, compression or platform we do not take */
  AIRLOCK_IMAGE_ERROR_NO_ARCH,     /* the image has no manifest for the requested arch */
  AIRLOCK_IMAGE_ERROR_UNSAFE,      /* a layer entry escapes the root (.., absolute, through a symlink) */
  AIRLOCK_IMAGE_ERROR_LIMIT,       /* more layers, bytes or entries than the bounds allow */
  AIRLOCK_IMAGE_ERROR_DISK,        /* building the rootfs disk failed (libguestfs) */
  AIRLOCK_IMAGE_ERROR_USER,        /* the image's User names no user or group of its /etc files */
  AIRLOCK_IMAGE_ERROR_NO_COMMAND,  /* no Entrypoint, no Cmd and no arguments: nothing to run */
} AirlockImageError;

typedef enum {
  AIRLOCK_LAYER_PLAIN,
  AIRLOCK_LAYER_GZIP,
  AIRLOCK_LAYER_ZSTD,
} AirlockLayerCompression;

typedef struct {
  char *digest;               /* "sha256:…" of the blob as stored */
  guint64 size;               /* bytes of the blob as stored */
  char *media_type;
  AirlockLayerCompression compression;
} AirlockImageLayer;

/* One arch of an image, resolved. */
typedef struct {
  char *reference;            /* as given */
  AirlockArch arch;
  char *platform;             /* "linux/arm64/v8" as the index or config says */
  char *index_digest;         /* "sha256:…" of the index, or NULL (single manifest) */
  char *manifest_digest;      /* "sha256:…" */
  char *config_digest;        /* "sha256:…" */
  GPtrArray *layers;          /* AirlockImageLayer *, base first */
  /* From the config, as written (NULL when absent). */
  GStrv entrypoint;
  GStrv cmd;
  GStrv env;                  /* "NAME=VALUE" */
  char *working_dir;
  char *user;                 /* "name", "uid", "name:group", "uid:gid" */
  int stop_signal;            /* StopSignal as a number (1-64), 0 when absent */
} AirlockImage;

/* An opened reference: where its blobs are. */
typedef struct _AirlockImageSource AirlockImageSource;

/* Opens @reference and reads its index (or docker manifest.json).  Fails
 * with AIRLOCK_IMAGE_ERROR and a message naming the reference, the file or
 * blob, and the reason (a bare path: the transport it needs); for
 * docker:// and containers-storage: with G_IO_ERROR_NOT_FOUND when skopeo
 * is not installed. */
AIRLOCK_PUBLIC AirlockImageSource *airlock_image_source_open (const char *reference, GError **error);
/* airlock_image_source_open() with the cache a docker:// or
 * containers-storage: image is copied into under @cache_dir (NULL:
 * airlock_default_cache_dir ()): the session's, or the command's
 * --cache-dir. */
AIRLOCK_PUBLIC AirlockImageSource *airlock_image_source_open_cached (const char *reference, const char *cache_dir,
                                                      GError **error);
AIRLOCK_PUBLIC void airlock_image_source_free (AirlockImageSource *source);
AIRLOCK_PUBLIC const char *airlock_image_source_get_reference (AirlockImageSource *source);

/* The arches the reference holds: a GArray of AirlockArch, in the order of
 * the index.  Other platforms are listed in @ret_others (may be NULL) as
 * "linux/s390x" strings.  An index entry without a platform is resolved
 * through its manifest and config (verified) to learn its arch. */
AIRLOCK_PUBLIC GArray *airlock_image_source_list_arches (AirlockImageSource *source,
                                                         GPtrArray **ret_others, GError **error);

/* Resolves @arch: the manifest for it (linux/amd64; linux/arm64 with or
 * without variant v8), its config and layer list, every JSON blob verified
 * against its digest and size.  Layers are verified when they are read. */
AIRLOCK_PUBLIC AirlockImage *airlock_image_resolve (AirlockImageSource *source, AirlockArch arch,
                                                    GError **error);
AIRLOCK_PUBLIC void airlock_image_free (AirlockImage *image);

/* A layer's bytes, decompressed (a plain tar), as a stream that hashes the
 * stored bytes as they are read and fails at the read that reaches the end
 * (AIRLOCK_IMAGE_ERROR_DIGEST, the message naming the reference, the blob
 * and both digests or sizes) when they do not match the layer's digest or
 * size; more bytes than the size fail at once.  Compressed data that does
 * not decompress fails with AIRLOCK_IMAGE_ERROR_MALFORMED (a layer that
 * claims gzip but is not: at the first read).  Nothing read from it may be
 * trusted before a read returned 0: read to the end even after the tar's
 * end-of-archive blocks.  Fails at once (NOT_FOUND, DIGEST) when the blob is
 * missing or its stored size is not the layer's.  Transfer full. */
AIRLOCK_PUBLIC GInputStream *airlock_image_open_layer (AirlockImageSource *source,
                                                       const AirlockImageLayer *layer,
                                                       GError **error);

/* "plain", "gzip", "zstd"; static string. */
AIRLOCK_PUBLIC const char *airlock_layer_compression_to_string (AirlockLayerCompression compression);

/* ---- running the image (user.c) ---- */

/* Resolves a config User ("name", "uid", "name:group", "uid:gid", NULL or ""
 * for root) the way runc does, against the contents of the image's
 * /etc/passwd and /etc/group (either may be NULL when the image has none).
 * Numeric ids need no files: a uid without a passwd entry gets gid 0.  A
 * user without a group takes its primary gid from passwd and its
 * supplementary groups from the /etc/group member lists; with an explicit
 * group there are no supplementary groups.  Names must exist.  On success
 * sets @ret_uid, @ret_gid and @ret_groups (a GArray of guint32, maybe empty;
 * transfer full); on failure (AIRLOCK_IMAGE_ERROR_USER, naming the user and
 * what is missing) leaves them untouched. */
AIRLOCK_PUBLIC gboolean airlock_image_resolve_user (const char *user, GBytes *etc_passwd,
                                                    GBytes *etc_group, guint32 *ret_uid,
                                                    guint32 *ret_gid, GArray **ret_groups,
                                                    GError **error);

/* The argv `docker run IMAGE ARGS` runs: Entrypoint followed by @args when
 * there are any (they replace Cmd), else by Cmd.  @args may be NULL.
 * Returns NULL with AIRLOCK_IMAGE_ERROR_NO_COMMAND when that is empty. */
AIRLOCK_PUBLIC GStrv airlock_image_command (const AirlockImage *image, const char *const *args,
                                            GError **error);

/* ---- rootfs disk (disk.c) ---- */

typedef struct {
  const char *cache_dir;      /* NULL: airlock_default_cache_dir () */
  gboolean force;             /* rebuild even when cached */
  AirlockProgressFunc progress;
  gpointer progress_data;
  /* The most the image's layers may decompress to, all together; a build
   * stops at the read that crosses it (AIRLOCK_IMAGE_ERROR_LIMIT) before
   * anything is written to a disk.  0: $AIRLOCK_MAX_IMAGE_SIZE ("8G",
   * "512M", bytes), else 8 GiB. */
  guint64 max_image_bytes;
} AirlockImageDiskOptions;

/* Returns the path of the ext4 disk image holding @image's root filesystem
 * (layers applied in order with OCI whiteouts), building it with libguestfs
 * when it is not cached.  Cached by manifest digest and builder version;
 * safe when two processes want the same disk at once; a cached disk that
 * fails its check (size, checksum) is rebuilt with a notice.  Transfer
 * full. */
AIRLOCK_PUBLIC char *airlock_image_disk_ensure (AirlockImageSource *source,
                                                const AirlockImage *image,
                                                const AirlockImageDiskOptions *options,
                                                GError **error);

/* The most the layers may decompress to (AirlockImageDiskOptions.max_image_bytes). */
/* Parses a size for --max-image-size and $AIRLOCK_MAX_IMAGE_SIZE: a whole
 * number of bytes, or with a K, M, G or T suffix (powers of 1024, an
 * optional trailing "iB" or "B").  Sets @ret_bytes, or fails
 * (G_OPTION_ERROR_BAD_VALUE) naming @text: 0, overflow, other suffixes. */
AIRLOCK_PUBLIC gboolean airlock_image_parse_size (const char *text, guint64 *ret_bytes, GError **error);

/* ---- whether this host can build rootfs disks (disk-check.c) ---- */

/* libguestfs builds its appliance with supermin from the host's own kernel,
 * and a kernel only root can read (Ubuntu installs /boot/vmlinuz-* as 0600)
 * makes the first disk build fail deep inside libguestfs: `airlock doctor`
 * asks here first and prints the fix. */
/* One finding: what was checked, whether it is usable, what was found,
 * and the fix when it is not (NULL when usable). */
typedef struct {
  char *what;
  gboolean ok;
  char *detail;
  char *fix;
} AirlockDiskCheck;

AIRLOCK_PUBLIC void airlock_disk_check_free (AirlockDiskCheck *check);

/* The checks, in order: libguestfs loads; a fixed appliance
 * ($LIBGUESTFS_PATH) or supermin to build one; and, for supermin, the
 * kernel it would take — $SUPERMIN_KERNEL, else the newest
 * @boot_dir/vmlinuz-VERSION with a @modules_dir/VERSION directory —
 * opened and read as this process, so the answer is this user's.
 * @boot_dir and @modules_dir are "/boot" and "/lib/modules" on a host
 * (tests give others).  Transfer full: AirlockDiskCheck *. */
AIRLOCK_PUBLIC GPtrArray *airlock_disk_checks (const char *boot_dir, const char *modules_dir);


G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockImageSource, airlock_image_source_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockDiskCheck, airlock_disk_check_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockImage, airlock_image_free)

G_END_DECLS
