/* The layer stream: stored bytes are hashed before they are decompressed,
 * and the read that reaches the end is the one that says whether any of
 * it could be trusted.  gzip goes through GZlibDecompressor, zstd through
 * libzstd's streaming API (its window bounded by the library default, so a
 * hostile frame cannot ask for gigabytes). */
#include "config.h"

#include "image/layer-stream-private.h"

#include <string.h>
#include <zstd.h>

#define INPUT_CHUNK (64 * 1024)

#define AIRLOCK_TYPE_LAYER_STREAM (airlock_layer_stream_get_type ())
G_DECLARE_FINAL_TYPE (AirlockLayerStream, airlock_layer_stream, AIRLOCK, LAYER_STREAM, GInputStream)

struct _AirlockLayerStream {
  GInputStream parent_instance;
  GInputStream *raw;
  char *what;
  guint64 size;               /* what the manifest says */
  guint64 seen;               /* stored bytes read so far */
  char *expected_hex;
  GChecksum *checksum;
  AirlockLayerCompression compression;
  GConverter *gzip;
  ZSTD_DStream *zstd;
  guint8 *input;
  gsize input_pos, input_len;
  gboolean raw_ended;         /* the raw stream ended and its bytes matched */
  gboolean member_done;       /* the decompressor ended a gzip member / zstd frame */
  gboolean ended;             /* 0 was returned */
  GError *failure;            /* sticky: every later read fails the same way */
};

G_DEFINE_TYPE (AirlockLayerStream, airlock_layer_stream, G_TYPE_INPUT_STREAM)

static const char *
compression_name (AirlockLayerCompression compression)
{
  return airlock_layer_compression_to_string (compression);
}

static gssize
fail (AirlockLayerStream *self, GError *failure, GError **error)
{
  if (!self->failure)
    self->failure = failure;
  else if (failure)
    g_error_free (failure);
  g_propagate_error (error, g_error_copy (self->failure));
  return -1;
}

/* The raw stream said 0: the stored bytes are all here. */
static gboolean
check_end (AirlockLayerStream *self, GError **error)
{
  const char *actual = g_checksum_get_string (self->checksum);

  if (self->seen != self->size)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: %" G_GUINT64_FORMAT " bytes, the manifest says %" G_GUINT64_FORMAT,
                   self->what, self->seen, self->size);
      return FALSE;
    }
  if (!g_str_equal (actual, self->expected_hex))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: the bytes hash to sha256:%s, not sha256:%s", self->what, actual,
                   self->expected_hex);
      return FALSE;
    }
  self->raw_ended = TRUE;
  return TRUE;
}

/* Reads stored bytes into @buffer, accounting for them.  0 only at a
 * verified end. */
static gssize
read_raw (AirlockLayerStream *self, guint8 *buffer, gsize count, GCancellable *cancellable,
          GError **error)
{
  g_autoptr (GError) local = NULL;
  gssize n = g_input_stream_read (self->raw, buffer, count, cancellable, &local);

  if (n < 0)
    {
      g_set_error (error, local->domain, local->code, "%s: %s", self->what, local->message);
      return -1;
    }
  if (n == 0)
    return check_end (self, error) ? 0 : -1;
  self->seen += n;
  if (self->seen > self->size)
    {
      /* No need to read the rest: it is already wrong. */
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: more than the %" G_GUINT64_FORMAT " bytes the manifest says",
                   self->what, self->size);
      return -1;
    }
  g_checksum_update (self->checksum, buffer, n);
  return n;
}

static gssize
layer_stream_read (GInputStream *stream, void *buffer, gsize count, GCancellable *cancellable,
                   GError **error)
{
  AirlockLayerStream *self = AIRLOCK_LAYER_STREAM (stream);
  GError *local = NULL;

  if (self->failure)
    return fail (self, NULL, error);
  if (self->ended || count == 0)
    return 0;

  if (self->compression == AIRLOCK_LAYER_PLAIN)
    {
      gssize n = read_raw (self, buffer, count, cancellable, &local);
      if (n < 0)
        return fail (self, local, error);
      self->ended = n == 0;
      return n;
    }

  for (;;)
    {
      gsize consumed = 0, produced = 0;

      if (self->input_pos == self->input_len && !self->raw_ended)
        {
          gssize n = read_raw (self, self->input, INPUT_CHUNK, cancellable, &local);
          if (n < 0)
            return fail (self, local, error);
          self->input_pos = 0;
          self->input_len = n;
          continue;
        }
      if (self->input_pos == self->input_len)
        {
          if (!self->member_done)
            return fail (self,
                         g_error_new (AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                                      "%s: the %s stream ends early", self->what,
                                      compression_name (self->compression)),
                         error);
          self->ended = TRUE;
          return 0;
        }

      if (self->compression == AIRLOCK_LAYER_GZIP)
        {
          GConverterResult res;

          /* Another member after a finished one (gzip allows several). */
          if (self->member_done)
            g_converter_reset (self->gzip);
          res = g_converter_convert (self->gzip, self->input + self->input_pos,
                                     self->input_len - self->input_pos, buffer, count,
                                     G_CONVERTER_NO_FLAGS, &consumed, &produced, &local);
          if (res == G_CONVERTER_ERROR)
            {
              if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_PARTIAL_INPUT) && !self->raw_ended)
                {
                  /* zlib keeps what it was given: only an empty input
                   * can be partial.  Drop it and read more. */
                  g_clear_error (&local);
                  self->input_pos = self->input_len;
                  continue;
                }
              {
                GError *malformed = g_error_new (AIRLOCK_IMAGE_ERROR,
                                                 AIRLOCK_IMAGE_ERROR_MALFORMED,
                                                 "%s: not valid gzip data: %s", self->what,
                                                 local->message);
                g_clear_error (&local);
                return fail (self, malformed, error);
              }
            }
          self->member_done = res == G_CONVERTER_FINISHED;
        }
      else
        {
          ZSTD_inBuffer in = { self->input, self->input_len, self->input_pos };
          ZSTD_outBuffer out = { buffer, count, 0 };
          size_t ret = ZSTD_decompressStream (self->zstd, &out, &in);

          if (ZSTD_isError (ret))
            return fail (self,
                         g_error_new (AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                                      "%s: not valid zstd data: %s", self->what,
                                      ZSTD_getErrorName (ret)),
                         error);
          consumed = in.pos - self->input_pos;
          produced = out.pos;
          self->member_done = ret == 0;
        }
      self->input_pos += consumed;
      if (produced > 0)
        return produced;
      if (consumed == 0 && self->input_pos < self->input_len)
        return fail (self,
                     g_error_new (AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                                  "%s: the %s decoder makes no progress", self->what,
                                  compression_name (self->compression)),
                     error);
    }
}

static gboolean
layer_stream_close (GInputStream *stream, GCancellable *cancellable, GError **error)
{
  AirlockLayerStream *self = AIRLOCK_LAYER_STREAM (stream);

  return g_input_stream_close (self->raw, cancellable, error);
}

static void
layer_stream_finalize (GObject *object)
{
  AirlockLayerStream *self = AIRLOCK_LAYER_STREAM (object);

  g_clear_object (&self->raw);
  g_clear_object (&self->gzip);
  g_clear_pointer (&self->zstd, ZSTD_freeDStream);
  g_clear_pointer (&self->checksum, g_checksum_free);
  g_clear_error (&self->failure);
  g_free (self->input);
  g_free (self->expected_hex);
  g_free (self->what);
  G_OBJECT_CLASS (airlock_layer_stream_parent_class)->finalize (object);
}

static void
airlock_layer_stream_class_init (AirlockLayerStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = layer_stream_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = layer_stream_read;
  G_INPUT_STREAM_CLASS (klass)->close_fn = layer_stream_close;
}

static void
airlock_layer_stream_init (AirlockLayerStream *self)
{
}

GInputStream *
airlock_layer_stream_new (GInputStream *raw, guint64 size, const char *sha256_hex,
                          AirlockLayerCompression compression, const char *what)
{
  AirlockLayerStream *self = g_object_new (AIRLOCK_TYPE_LAYER_STREAM, NULL);

  self->raw = raw;
  self->size = size;
  self->expected_hex = g_strdup (sha256_hex);
  self->what = g_strdup (what);
  self->checksum = g_checksum_new (G_CHECKSUM_SHA256);
  self->compression = compression;
  if (compression != AIRLOCK_LAYER_PLAIN)
    self->input = g_malloc (INPUT_CHUNK);
  if (compression == AIRLOCK_LAYER_GZIP)
    self->gzip = G_CONVERTER (g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP));
  else if (compression == AIRLOCK_LAYER_ZSTD)
    {
      self->zstd = ZSTD_createDStream ();
      ZSTD_initDStream (self->zstd);
    }
  return G_INPUT_STREAM (self);
}

const char *
airlock_layer_compression_to_string (AirlockLayerCompression compression)
{
  switch (compression)
    {
    case AIRLOCK_LAYER_PLAIN: return "plain";
    case AIRLOCK_LAYER_GZIP: return "gzip";
    case AIRLOCK_LAYER_ZSTD: return "zstd";
    }
  return "unknown";
}
