/* libFuzzer harness for the host's decoder of the stdio port's chunks
 * (lib/vm/stdio-chunks.c): the guest's bytes, as the port delivers them.
 *
 * The input is the stream; a PRNG seeded with it cuts it into reads of 1
 * to 70,000 bytes (the port gives no message boundaries), and each read
 * is appended to the pending buffer and decoded, as streams.c's stdio worker
 * does.  Besides the sanitizers' findings (a chunk read past the buffer),
 * it aborts when the chunks handed on are not exactly those of an
 * independent one-pass reading of the whole stream (stream, flags, bytes,
 * in order), when what stays pending is not the stream's unread tail or
 * already holds a whole chunk, or when the count returned is not the
 * number of chunks handed on.  Seeds: tests/fuzz/corpus/stdio/, written by
 * hand (a few chunks each; see the commit that added them). */
#include "config.h"

#include "vm/stdio-chunks-private.h"

#include "protocol.h"
#include "wire.h"

#include "fuzz-util.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

typedef struct {
  GByteArray *seen;       /* stream, flags, le16 length, bytes: per chunk, in order */
  GByteArray *pending;
  guint calls;
} Decoded;

static void
on_chunk (const AirlockStdioChunk *chunk, gpointer user_data)
{
  Decoded *d = user_data;
  guint8 h[4] = { (guint8) chunk->stream, (guint8) chunk->flags, (guint8) chunk->len,
                  (guint8) (chunk->len >> 8) };

  fuzz_check (chunk->stream <= 0xff && chunk->flags <= 0xff && chunk->len <= 0xffff);
  /* The chunk lies in the pending buffer, after its header. */
  fuzz_check (chunk->data >= d->pending->data + AIRLOCK_STDIO_HEADER_SIZE);
  fuzz_check (chunk->data + chunk->len <= d->pending->data + d->pending->len);
  g_byte_array_append (d->seen, h, sizeof h);
  g_byte_array_append (d->seen, chunk->data, (guint) chunk->len);
  d->calls++;
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint64 state = fuzz_input_hash (data, size);
  g_autoptr (GByteArray) seen = g_byte_array_new ();
  g_autoptr (GByteArray) pending = g_byte_array_new ();
  Decoded d = { seen, pending, 0 };
  gsize pos = 0, whole = 0;
  guint returned = 0;

  while (pos < size)
    {
      guint64 r = fuzz_splitmix64 (&state);
      /* Mostly small reads (a chunk split anywhere), sometimes large. */
      gsize n = (r & 3) ? 1 + (r >> 8) % 16 : 1 + (r >> 8) % 70000;

      n = MIN (n, size - pos);
      g_byte_array_append (pending, data + pos, (guint) n);
      pos += n;
      returned += airlock_stdio_take_chunks (pending, on_chunk, &d);
      /* Never a whole chunk left behind. */
      fuzz_check (pending->len < AIRLOCK_STDIO_HEADER_SIZE
                  || pending->len < AIRLOCK_STDIO_HEADER_SIZE
                                    + (gsize) wire_get_le16 (pending->data + 2));
    }
  fuzz_check (returned == d.calls);

  /* The one-pass reading: every whole chunk is the stream's bytes as they
   * are (the same four header bytes, then the data), so the chunks handed
   * on, concatenated, are the stream up to the first chunk cut short. */
  while (size - whole >= AIRLOCK_STDIO_HEADER_SIZE
         && size - whole - AIRLOCK_STDIO_HEADER_SIZE >= wire_get_le16 (data + whole + 2))
    whole += AIRLOCK_STDIO_HEADER_SIZE + wire_get_le16 (data + whole + 2);
  fuzz_check (seen->len == whole);
  fuzz_check (whole == 0 || memcmp (seen->data, data, whole) == 0);
  fuzz_check (pending->len == size - whole);
  fuzz_check (pending->len == 0 || memcmp (pending->data, data + whole, pending->len) == 0);
  return 0;
}
