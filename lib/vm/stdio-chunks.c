#include "config.h"

#include "vm/stdio-chunks-private.h"

#include "protocol.h"
#include "wire.h"

guint
airlock_stdio_take_chunks (GByteArray *pending, AirlockStdioChunkFunc func, gpointer user_data)
{
  gsize pos = 0;
  guint n = 0;

  /* Removed once at the end, not per chunk: a read of many small chunks
   * would otherwise move the rest of the buffer once for each. */
  while (pending->len - pos >= AIRLOCK_STDIO_HEADER_SIZE)
    {
      const guint8 *h = pending->data + pos;
      AirlockStdioChunk chunk = {
        .stream = h[0],
        .flags = h[1],
        .data = h + AIRLOCK_STDIO_HEADER_SIZE,
        .len = wire_get_le16 (h + 2),
      };

      if (pending->len - pos - AIRLOCK_STDIO_HEADER_SIZE < chunk.len)
        break;
      func (&chunk, user_data);
      pos += AIRLOCK_STDIO_HEADER_SIZE + chunk.len;
      n++;
    }
  if (pos)
    g_byte_array_remove_range (pending, 0, (guint) pos);
  return n;
}
