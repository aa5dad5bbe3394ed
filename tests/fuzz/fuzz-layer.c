/* libFuzzer harness for the layer path (lib/image/layer-stream.c and
 * layer.c): the decompressing, digest-checking stream and the host-side
 * tar scan (pass 1) and re-encoding (pass 2), all from memory.
 *
 * The input is used two ways.  As a stored blob: read through
 * airlock_layer_stream_new() as plain, gzip and zstd, with its right
 * digest and size and with wrong ones, the raw bytes arriving in
 * pseudo-random short reads and read back in reads of pseudo-random sizes.
 * And as layer tars: the input, or what it decompresses to when it is a
 * gzip or zstd stream, cut after each pair of zero blocks at a 512-byte
 * boundary (a tar's end) into up to FUZZ_LAYER_MAX layers that are
 * scanned in order on one model, each plain, gzip-compressed here (two
 * members when the input's hash says so) and zstd-compressed here (two
 * frames likewise), so the three scans must agree.  The split points and
 * read sizes come from a hash of the input, so a crash reproduces from the
 * input file alone.
 *
 * Besides the sanitizers' findings, it aborts when an invariant breaks:
 *   - the stream with the right digest and size gives the input back
 *     (plain) or fails only with MALFORMED (gzip, zstd: never DIGEST), and
 *     once failed keeps failing; with a wrong digest or size it never
 *     ends cleanly, and when the right one did, it fails with DIGEST;
 *   - a stream of bytes compressed here gives them back exactly;
 *   - the scan's result (success, code, message, entries, tar and disk
 *     bytes, removals, model size) is the same plain, gzip and zstd;
 *   - a scan never fails with DIGEST when the digest is right, and never
 *     succeeds when it is wrong (when it would have, it fails with DIGEST);
 *   - messages start with the layer's name and are printable text (entry
 *     paths are escaped);
 *   - a successful scan read every tar byte (tar bytes = layer size), and
 *     each removal (what the appliance deletes) is a relative path with no
 *     empty, '.' or '..' component;
 *   - pass 2 of a layer pass 1 accepted succeeds on the same bytes, and
 *     its tar scans again on a fresh model to the same tree (same model
 *     size), with the same entries but whiteouts, and nothing to remove;
 *     on bytes with a wrong digest it fails with DIGEST, having written a
 *     strict prefix of the good copy (no end-of-archive). */
#define _GNU_SOURCE

#include "config.h"

#include "image/disk-private.h"
#include "image/layer-stream-private.h"

#include "fuzz-util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_LAYER_MAX 4
#define FUZZ_LAYER_BLOCK 512

/* ---- a raw stream that returns short reads ------------------------------- */

#define FUZZ_TYPE_CHUNKED_STREAM (fuzz_chunked_stream_get_type ())
G_DECLARE_FINAL_TYPE (FuzzChunkedStream, fuzz_chunked_stream, FUZZ, CHUNKED_STREAM, GInputStream)

struct _FuzzChunkedStream {
  GInputStream parent_instance;
  GBytes *bytes;
  gsize pos;
  guint64 rng;
};

G_DEFINE_TYPE (FuzzChunkedStream, fuzz_chunked_stream, G_TYPE_INPUT_STREAM)

static gssize
chunked_stream_read (GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable,
                     GError **error)
{
  FuzzChunkedStream *self = FUZZ_CHUNKED_STREAM (stream);
  gsize size;
  const guint8 *data = g_bytes_get_data (self->bytes, &size);
  /* mostly short reads, sometimes whatever was asked */
  gsize n = fuzz_splitmix64 (&self->rng) % 4 == 0 ? count : 1 + fuzz_splitmix64 (&self->rng) % 700;

  n = MIN (MIN (n, count), size - self->pos);
  if (n > 0)
    memcpy (buffer, data + self->pos, n);
  self->pos += n;
  return (gssize) n;
}

static void
chunked_stream_finalize (GObject *object)
{
  g_bytes_unref (FUZZ_CHUNKED_STREAM (object)->bytes);
  G_OBJECT_CLASS (fuzz_chunked_stream_parent_class)->finalize (object);
}

static void
fuzz_chunked_stream_class_init (FuzzChunkedStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chunked_stream_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = chunked_stream_read;
}

static void
fuzz_chunked_stream_init (FuzzChunkedStream *self)
{
}

static GInputStream *
chunked_stream_new (GBytes *bytes, guint64 seed)
{
  FuzzChunkedStream *self = g_object_new (FUZZ_TYPE_CHUNKED_STREAM, NULL);

  self->bytes = g_bytes_ref (bytes);
  self->rng = seed;
  return G_INPUT_STREAM (self);
}

/* A layer stream over @stored as airlock_image_open_layer makes one; @hex
 * and @size NULL/G_MAXUINT64 mean the right ones. */
static GInputStream *
layer_stream (GBytes *stored, AirlockLayerCompression compression, const char *hex,
              guint64 size, const char *what, guint64 seed)
{
  g_autofree char *right = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, stored);

  return airlock_layer_stream_new (chunked_stream_new (stored, seed),
                                   size == G_MAXUINT64 ? g_bytes_get_size (stored) : size,
                                   hex ? hex : right, compression, what);
}

/* ---- compression done here ----------------------------------------------- */

static void
gzip_member (GByteArray *out, const guint8 *data, gsize len)
{
  static const guint8 empty[1];
  g_autoptr (GZlibCompressor) gz = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 1);
  guint8 buf[16384];
  gsize pos = 0;

  for (;;)
    {
      g_autoptr (GError) error = NULL;
      gsize consumed = 0, produced = 0;
      GConverterResult r = g_converter_convert (G_CONVERTER (gz), len ? data + pos : empty,
                                                len - pos, buf, sizeof buf,
                                                G_CONVERTER_INPUT_AT_END, &consumed, &produced,
                                                &error);

      fuzz_check (r != G_CONVERTER_ERROR);
      pos += consumed;
      g_byte_array_append (out, buf, (guint) produced);
      if (r == G_CONVERTER_FINISHED)
        return;
    }
}

static void
zstd_frame (GByteArray *out, const guint8 *data, gsize len)
{
  static ZSTD_CCtx *cctx;
  gsize bound = ZSTD_compressBound (len);
  guint old = out->len;
  size_t n;

  if (!cctx)
    cctx = ZSTD_createCCtx ();
  g_byte_array_set_size (out, old + (guint) bound);
  n = ZSTD_compressCCtx (cctx, out->data + old, bound, len ? (const void *) data : "", len, 1);
  fuzz_check (!ZSTD_isError (n));
  g_byte_array_set_size (out, old + (guint) n);
}

/* @data compressed as one member/frame, or two when @cut is inside it. */
static GBytes *
compress (const guint8 *data, gsize len, AirlockLayerCompression compression, gsize cut)
{
  GByteArray *out = g_byte_array_new ();
  void (*one) (GByteArray *, const guint8 *, gsize) =
    compression == AIRLOCK_LAYER_GZIP ? gzip_member : zstd_frame;

  if (cut > 0 && cut < len)
    {
      one (out, data, cut);
      one (out, data + cut, len - cut);
    }
  else
    one (out, data, len);
  return g_byte_array_free_to_bytes (out);
}

/* ---- the stream on its own ----------------------------------------------- */

static void
check_message (const GError *error, const char *what)
{
  fuzz_check (error != NULL && error->domain == AIRLOCK_IMAGE_ERROR);
  fuzz_check (g_str_has_prefix (error->message, what));
  fuzz_check_safe_text (error->message);
}

/* Reads @stream to its end in reads of pseudo-random sizes: the bytes, or
 * NULL with @error. */
static GBytes *
read_all (GInputStream *stream, guint64 *rng, GError **error)
{
  g_autoptr (GByteArray) out = g_byte_array_new ();
  guint8 buf[8192];
  gssize n;

  do
    {
      gsize want = fuzz_splitmix64 (rng) % 3 == 0 ? sizeof buf
                                                  : 1 + fuzz_splitmix64 (rng) % 600;

      n = g_input_stream_read (stream, buf, want, NULL, error);
      fuzz_check (n <= (gssize) want);
      if (n > 0)
        g_byte_array_append (out, buf, (guint) n);
    }
  while (n > 0);
  if (n < 0)
    {
      /* sticky: nothing read after a failure can end cleanly */
      fuzz_check (g_input_stream_read (stream, buf, sizeof buf, NULL, NULL) < 0);
      return NULL;
    }
  /* and the end stays the end */
  fuzz_check (g_input_stream_read (stream, buf, sizeof buf, NULL, NULL) == 0);
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}

/* The input as a stored blob of each compression.  Returns what it
 * decompresses to when it is a gzip or zstd stream (the layer tar to
 * scan), else NULL. */
static GBytes *
check_streams (GBytes *stored, guint64 seed)
{
  static const AirlockLayerCompression compressions[] = {
    AIRLOCK_LAYER_PLAIN, AIRLOCK_LAYER_GZIP, AIRLOCK_LAYER_ZSTD,
  };
  const char *what = "fuzz blob";
  g_autofree char *right = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, stored);
  g_autofree char *wrong = g_strdup (right);
  gsize size = g_bytes_get_size (stored);
  GBytes *tar = NULL;
  guint64 rng = seed;

  wrong[seed % 64] = wrong[seed % 64] == '0' ? '1' : '0';
  for (guint c = 0; c < G_N_ELEMENTS (compressions); c++)
    {
      AirlockLayerCompression compression = compressions[c];
      g_autoptr (GError) error = NULL;
      g_autoptr (GInputStream) stream = layer_stream (stored, compression, NULL, G_MAXUINT64, what,
                                                      seed + c);
      g_autoptr (GBytes) out = read_all (stream, &rng, &error);
      const struct {
        const char *hex;
        guint64 size;
      } bad[] = {
        { wrong, size },
        { right, size + 1 },
        { right, size - 1 },   /* G_MAXUINT64 for an empty blob: skipped */
      };

      fuzz_check ((out == NULL) == (error != NULL));
      if (compression == AIRLOCK_LAYER_PLAIN)
        fuzz_check (out != NULL && g_bytes_equal (out, stored));
      if (!out)
        {
          check_message (error, what);
          fuzz_check (error->code == AIRLOCK_IMAGE_ERROR_MALFORMED);
        }
      else if (compression != AIRLOCK_LAYER_PLAIN && !tar && g_bytes_get_size (out) > 0)
        tar = g_bytes_ref (out);

      for (guint b = 0; b < G_N_ELEMENTS (bad); b++)
        {
          g_autoptr (GError) bad_error = NULL;
          g_autoptr (GInputStream) bad_stream = NULL;
          g_autoptr (GBytes) bad_out = NULL;

          if (bad[b].size == G_MAXUINT64)
            continue;
          bad_stream = layer_stream (stored, compression, bad[b].hex, bad[b].size, what, seed + b);
          bad_out = read_all (bad_stream, &rng, &bad_error);
          fuzz_check (bad_out == NULL);
          check_message (bad_error, what);
          if (out)
            fuzz_check (bad_error->code == AIRLOCK_IMAGE_ERROR_DIGEST);
          else
            fuzz_check (bad_error->code == AIRLOCK_IMAGE_ERROR_DIGEST
                        || bad_error->code == AIRLOCK_IMAGE_ERROR_MALFORMED);
        }
    }
  return tar;
}

/* ---- the scan -------------------------------------------------------------- */

typedef struct {
  gboolean ok;
  int code;
  char *message;
  guint64 entries, tar_bytes, disk_bytes;
  GStrv removals;
  guint model_size;
} ScanResult;

static void
scan_result_clear (ScanResult *r)
{
  g_clear_pointer (&r->message, g_free);
  g_clear_pointer (&r->removals, g_strfreev);
}

/* A path the appliance's `rm -rf` is given: relative, every component a
 * name. */
static void
check_removal (const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);

  fuzz_check (*path != '\0' && *path != '/');
  fuzz_check (strlen (path) <= AIRLOCK_IMAGE_MAX_PATH);
  for (guint i = 0; parts[i]; i++)
    fuzz_check (*parts[i] && !g_str_equal (parts[i], ".") && !g_str_equal (parts[i], ".."));
}

/* Scans @stream (transfer full) as layer @index on @model; with @ret_plan
 * the plan of a successful scan. */
static void
scan (GInputStream *stream, guint index, AirlockRootfsModel *model, ScanResult *ret,
      AirlockLayerPlan **ret_plan)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *what = g_strdup_printf ("fuzz layer %u", index + 1);
  g_autoptr (AirlockLayerPlan) plan = airlock_layer_scan (stream, index, model, 0, 0, what, &error);
  GPtrArray *removals;
  GStrvBuilder *builder;

  memset (ret, 0, sizeof *ret);
  g_object_unref (stream);
  fuzz_check ((plan == NULL) == (error != NULL));
  if (!plan)
    {
      check_message (error, what);
      ret->code = error->code;
      ret->message = g_strdup (error->message);
      return;
    }
  ret->ok = TRUE;
  ret->entries = airlock_layer_plan_get_entries (plan);
  ret->tar_bytes = airlock_layer_plan_get_tar_bytes (plan);
  ret->disk_bytes = airlock_layer_plan_get_disk_bytes (plan);
  ret->model_size = airlock_rootfs_model_size (model);
  fuzz_check (ret->disk_bytes >= 256 * ret->entries);
  fuzz_check (ret->model_size >= 1);
  removals = airlock_layer_plan_get_removals (plan);
  builder = g_strv_builder_new ();
  for (guint i = 0; i < removals->len; i++)
    {
      check_removal (removals->pdata[i]);
      g_strv_builder_add (builder, removals->pdata[i]);
    }
  ret->removals = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  if (ret_plan)
    *ret_plan = g_steal_pointer (&plan);
}

static void
check_same_scan (const ScanResult *a, const ScanResult *b)
{
  fuzz_check (a->ok == b->ok && a->code == b->code);
  fuzz_check (g_strcmp0 (a->message, b->message) == 0);
  fuzz_check (a->entries == b->entries && a->tar_bytes == b->tar_bytes);
  fuzz_check (a->disk_bytes == b->disk_bytes && a->model_size == b->model_size);
  fuzz_check ((a->removals == NULL) == (b->removals == NULL));
  if (a->removals)
    fuzz_check (g_strv_equal ((const char *const *) a->removals,
                              (const char *const *) b->removals));
}

/* Pass 2 of @tar with @plan (pass 1 of @tar as layer 1 of a fresh model,
 * which gave @result), its output scanned again; and pass 2 of the same
 * bytes with a wrong digest. */
static void
check_copy (GBytes *tar, AirlockLayerPlan *plan, const ScanResult *result, guint64 seed)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockRootfsModel) model = airlock_rootfs_model_new ();
  g_autoptr (GInputStream) stream = layer_stream (tar, AIRLOCK_LAYER_PLAIN, NULL, G_MAXUINT64,
                                                  "fuzz layer 1 blob", seed);
  g_autoptr (GInputStream) tampered = NULL;
  g_autofree char *wrong = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, tar);
  g_autoptr (GBytes) copied = NULL;
  g_autoptr (AirlockLayerPlan) again = NULL;
  int fd = memfd_create ("fuzz-layer-copy", MFD_CLOEXEC);
  ScanResult rescan;
  guint64 skipped;
  struct stat st;
  guint8 *bytes;

  fuzz_check (fd >= 0);
  fuzz_check (airlock_layer_copy (stream, plan, fd, "fuzz layer 1", NULL, NULL, &error));
  fuzz_check (error == NULL);
  fuzz_check (fstat (fd, &st) == 0);
  bytes = g_malloc (MAX (st.st_size, 1));
  fuzz_check (pread (fd, bytes, st.st_size, 0) == st.st_size);
  copied = g_bytes_new_take (bytes, st.st_size);

  /* whiteouts (and aufs markers) are what pass 2 leaves out: 256 disk
   * bytes each in the estimate, and not entries of the copy */
  scan (layer_stream (copied, AIRLOCK_LAYER_PLAIN, NULL, G_MAXUINT64, "fuzz layer 1 blob", seed),
        0, model, &rescan, &again);
  fuzz_check (rescan.ok);
  fuzz_check (rescan.entries <= result->entries);
  skipped = result->entries - rescan.entries;
  fuzz_check (rescan.disk_bytes + 256 * skipped == result->disk_bytes);
  fuzz_check (rescan.model_size == result->model_size);
  fuzz_check (rescan.removals[0] == NULL);
  fuzz_check (rescan.tar_bytes == g_bytes_get_size (copied));
  scan_result_clear (&rescan);

  /* Bytes that fail their digest: FALSE, and what was written is a strict
   * prefix of the good copy, cut before its end-of-archive (so the
   * appliance's tar sees a cut-short archive, not a whole one). */
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  fuzz_check (ftruncate (fd, 0) == 0);
  tampered = layer_stream (tar, AIRLOCK_LAYER_PLAIN, wrong, G_MAXUINT64, "fuzz layer 1 blob", seed);
  g_clear_error (&error);
  fuzz_check (!airlock_layer_copy (tampered, plan, fd, "fuzz layer 1", NULL, NULL, &error));
  check_message (error, "fuzz layer 1");
  fuzz_check (error->code == AIRLOCK_IMAGE_ERROR_DIGEST);
  fuzz_check (fstat (fd, &st) == 0);
  fuzz_check ((gsize) st.st_size < g_bytes_get_size (copied));
  bytes = g_malloc (MAX (st.st_size, 1));
  fuzz_check (pread (fd, bytes, st.st_size, 0) == st.st_size);
  fuzz_check (memcmp (bytes, g_bytes_get_data (copied, NULL), st.st_size) == 0);
  g_free (bytes);
  close (fd);
}

/* Where the next layer starts: after the first pair of zero blocks at a
 * block boundary, or @len. */
static gsize
layer_end (const guint8 *data, gsize len)
{
  for (gsize i = 0; i + 2 * FUZZ_LAYER_BLOCK <= len; i += FUZZ_LAYER_BLOCK)
    {
      gboolean zero = TRUE;

      for (gsize j = 0; j < 2 * FUZZ_LAYER_BLOCK && zero; j++)
        zero = data[i + j] == 0;
      if (zero)
        return i + 2 * FUZZ_LAYER_BLOCK;
    }
  return len;
}

static void
check_layers (GBytes *tar, guint64 seed)
{
  g_autoptr (AirlockRootfsModel) plain_model = airlock_rootfs_model_new ();
  g_autoptr (AirlockRootfsModel) gzip_model = airlock_rootfs_model_new ();
  g_autoptr (AirlockRootfsModel) zstd_model = airlock_rootfs_model_new ();
  gsize size;
  const guint8 *data = g_bytes_get_data (tar, &size);
  gsize start = 0;
  guint64 rng = seed;

  if (!data)
    data = (const guint8 *) "";   /* an empty GBytes has no data pointer */
  for (guint index = 0; index < FUZZ_LAYER_MAX && (start < size || index == 0); index++)
    {
      gsize end = index + 1 == FUZZ_LAYER_MAX ? size : start + layer_end (data + start, size - start);
      gsize len = end - start;
      g_autoptr (GBytes) layer = g_bytes_new (data + start, len);
      gsize cut = len ? fuzz_splitmix64 (&rng) % (len + 1) : 0;
      g_autoptr (GBytes) gzipped = compress (data + start, len, AIRLOCK_LAYER_GZIP, cut);
      g_autoptr (GBytes) zstded = compress (data + start, len, AIRLOCK_LAYER_ZSTD, cut);
      g_autoptr (AirlockLayerPlan) plan = NULL;
      g_autofree char *wrong = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, layer);
      g_autoptr (AirlockRootfsModel) fresh = airlock_rootfs_model_new ();
      g_autofree char *what = g_strdup_printf ("fuzz layer %u blob", index + 1);
      ScanResult plain, gzip, zstd, tampered;

      /* the compressed copies decompress to the layer exactly */
      {
        g_autoptr (GInputStream) s = layer_stream (gzipped, AIRLOCK_LAYER_GZIP, NULL, G_MAXUINT64,
                                                   what, rng);
        g_autoptr (GBytes) back = read_all (s, &rng, NULL);

        fuzz_check (back != NULL && g_bytes_equal (back, layer));
      }
      {
        g_autoptr (GInputStream) s = layer_stream (zstded, AIRLOCK_LAYER_ZSTD, NULL, G_MAXUINT64,
                                                   what, rng);
        g_autoptr (GBytes) back = read_all (s, &rng, NULL);

        fuzz_check (back != NULL && g_bytes_equal (back, layer));
      }

      scan (layer_stream (layer, AIRLOCK_LAYER_PLAIN, NULL, G_MAXUINT64, what, rng), index,
            plain_model, &plain, &plan);
      scan (layer_stream (gzipped, AIRLOCK_LAYER_GZIP, NULL, G_MAXUINT64, what, rng + 1), index,
            gzip_model, &gzip, NULL);
      scan (layer_stream (zstded, AIRLOCK_LAYER_ZSTD, NULL, G_MAXUINT64, what, rng + 2), index,
            zstd_model, &zstd, NULL);
      check_same_scan (&plain, &gzip);
      check_same_scan (&plain, &zstd);
      fuzz_check (plain.ok || plain.code != AIRLOCK_IMAGE_ERROR_DIGEST);
      if (plain.ok)
        fuzz_check (plain.tar_bytes == len);

      /* Nothing is accepted before the digest is: a wrong one always
       * fails, and where the right one passed, it is what fails. */
      wrong[rng % 64] = wrong[rng % 64] == 'f' ? 'e' : 'f';
      scan (layer_stream (layer, AIRLOCK_LAYER_PLAIN, wrong, G_MAXUINT64, what, rng), index, fresh,
            &tampered, NULL);
      fuzz_check (!tampered.ok);
      if (plain.ok)
        fuzz_check (tampered.code == AIRLOCK_IMAGE_ERROR_DIGEST);

      if (plain.ok && index == 0)
        check_copy (layer, plan, &plain, rng);

      scan_result_clear (&gzip);
      scan_result_clear (&zstd);
      scan_result_clear (&tampered);
      if (!plain.ok)
        {
          scan_result_clear (&plain);
          return;   /* the models are unusable after a failure */
        }
      scan_result_clear (&plain);
      start = end;
    }
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint64 seed = fuzz_input_hash (data, size);
  /* an exact copy, so ASan sees the input's real extent */
  g_autoptr (GBytes) stored = g_bytes_new (data, size);
  g_autoptr (GBytes) decompressed = check_streams (stored, seed);

  check_layers (decompressed ? decompressed : stored, seed);
  return 0;
}
