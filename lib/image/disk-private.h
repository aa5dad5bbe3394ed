/* The rootfs disk's internals: the host-side model of the layers (layer.c)
 * and the builder with a pluggable layer opener (disk.c), so tests can
 * feed layers without an image on disk. */
#pragma once

#include <gio/gio.h>

#include "image/image.h"

G_BEGIN_DECLS

/* Bump when the disk layout changes (features, mkfs options, how layers
 * are applied): it is part of the cache key, so old disks are not reused. */
#define AIRLOCK_IMAGE_DISK_BUILDER_VERSION 1

/* Bounds on what one image may hold (AIRLOCK_IMAGE_ERROR_LIMIT). */
#define AIRLOCK_IMAGE_MAX_ENTRIES 2000000
#define AIRLOCK_IMAGE_MAX_PATH 4096
/* The decompressed size of an image's layers, all together, unless
 * AirlockImageDiskOptions.max_image_bytes or $AIRLOCK_MAX_IMAGE_SIZE
 * says otherwise.  The layer count and the stored sizes are bounded, but
 * compression is not: a 67 KB zstd blob inflates to 2 GiB of zeros, and
 * the disk is sized from what the layers hold.  8 GiB is over any
 * runtime image we know of; a build image that needs more can say so. */
#define AIRLOCK_IMAGE_DEFAULT_MAX_BYTES (G_GUINT64_CONSTANT (8) << 30)

/* ---- layer.c ---- */

/* The file tree the layers build, as paths and kinds: what each entry is
 * checked against (a path through a symlink, a hard link to nothing) and
 * what whiteouts delete. */
typedef struct _AirlockRootfsModel AirlockRootfsModel;

/* What pass 1 learnt about one layer: what to remove from the disk before
 * extracting it, the entries pass 2 must see again (in order), and sizes. */
typedef struct _AirlockLayerPlan AirlockLayerPlan;

AirlockRootfsModel *airlock_rootfs_model_new (void);
void airlock_rootfs_model_free (AirlockRootfsModel *model);
/* Entries in the model now (the files of the finished tree). */
guint airlock_rootfs_model_size (AirlockRootfsModel *model);

void airlock_layer_plan_free (AirlockLayerPlan *plan);
/* Paths (relative to the root, no leading '/') to remove recursively
 * before the layer is extracted: whiteouts, the lower contents of opaque
 * directories, lower entries this layer replaces with another kind. */
GPtrArray *airlock_layer_plan_get_removals (AirlockLayerPlan *plan);
/* Decompressed tar bytes of the layer. */
guint64 airlock_layer_plan_get_tar_bytes (AirlockLayerPlan *plan);
/* Bytes the layer's entries take on ext4, overestimated. */
guint64 airlock_layer_plan_get_disk_bytes (AirlockLayerPlan *plan);
guint64 airlock_layer_plan_get_entries (AirlockLayerPlan *plan);

/* Pass 1: reads @stream (a decompressed layer tar) to its end, so the
 * stream's digest check has passed before anything is decided, then
 * checks every entry against @model (layers below and earlier entries of
 * this one) and applies the layer to it.  @image_bytes_before is the
 * decompressed size of the image's layers below this one; with
 * @image_max_bytes not 0, the read that takes the sum over it fails at
 * once (LIMIT, naming the bound), before the digest is known.  @what
 * names the layer in messages ("image 'REF' layer sha256:…").  Fails
 * with AIRLOCK_IMAGE_ERROR_UNSAFE (absolute path, '..', through a
 * symlink, a hard link that escapes), MALFORMED (not a tar, a hard link
 * to nothing, an entry type a rootfs cannot hold), LIMIT, or the stream's
 * own error (digest, I/O).  @model is unusable after a failure. */
AirlockLayerPlan *airlock_layer_scan (GInputStream *stream, guint layer_index,
                                      AirlockRootfsModel *model, guint64 image_bytes_before,
                                      guint64 image_max_bytes, const char *what,
                                      GError **error);

typedef void (*AirlockLayerCopyProgress) (guint64 tar_bytes, gpointer user_data);

/* Pass 2: reads @stream again and writes its entries to @fd as a plain tar
 * (pax) that GNU tar in the appliance extracts exactly: normalised paths,
 * numeric ownership only, modes, mtimes, xattrs, hard links, symlinks and
 * device nodes kept; whiteouts left out.  Every entry must be the one pass
 * 1 saw at that position (else MALFORMED: the blob changed under us).
 * Reads @stream to its end before writing the tar's end-of-archive, so a
 * digest failure leaves the tar cut short and this returns FALSE.  Does not
 * close @fd.  A write error (EPIPE: the reader went away) is G_IO_ERROR. */
gboolean airlock_layer_copy (GInputStream *stream, AirlockLayerPlan *plan, int fd,
                             const char *what, AirlockLayerCopyProgress progress,
                             gpointer progress_data, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockRootfsModel, airlock_rootfs_model_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockLayerPlan, airlock_layer_plan_free)

/* ---- disk.c ---- */

/* Opens layer @index of the image being built (what
 * airlock_image_open_layer does for a real source). */
typedef GInputStream *(*AirlockLayerOpenFunc) (const AirlockImageLayer *layer, guint index,
                                               gpointer user_data, GError **error);

/* airlock_image_disk_ensure() with layers from @open_layer.  When
 * @ret_built is not NULL it says whether this call built the disk (FALSE:
 * a good cached disk was reused). */
char *airlock_image_disk_ensure_with (const AirlockImage *image, AirlockLayerOpenFunc open_layer,
                                      gpointer open_data, const AirlockImageDiskOptions *options,
                                      gboolean *ret_built, GError **error);

/* Hex SHA-256 of a file through libcrypto (SHA extensions where the CPU
 * has them: ~10x GChecksum). */
char *airlock_image_disk_sha256 (const char *path, GError **error);

G_END_DECLS
