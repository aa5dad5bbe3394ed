/* The host's decoder of the stdio port's chunks (guest/protocol.h,
 * AIRLOCK_STDIO_*): stream (1 byte), flags (1 byte), length (le16), that
 * many bytes.
 *
 * The guest sends them, so they are untrusted bytes; nothing on this port
 * is evidence, but a decoder that read past a chunk, or lost or invented
 * output across the port's arbitrary read boundaries, would show a person
 * other output than the workload's.  Apart from streams.c (which reads the
 * port and keeps the output) so that tests/fuzz/fuzz-stdio.c can feed it
 * any bytes in any splits. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint stream;          /* AIRLOCK_STDIO_STDOUT, …; any byte the guest sent */
  guint flags;           /* AIRLOCK_STDIO_EOF, …; any byte the guest sent */
  const guint8 *data;    /* points into the pending buffer: valid during the call only */
  gsize len;             /* at most 65535 */
} AirlockStdioChunk;

typedef void (*AirlockStdioChunkFunc) (const AirlockStdioChunk *chunk, gpointer user_data);

/* Hands each whole chunk at the start of @pending to @func, in order, and
 * removes it; a chunk not yet whole stays for the next read.  Returns the
 * number of chunks handed on.  @func must not touch @pending. */
guint airlock_stdio_take_chunks (GByteArray *pending, AirlockStdioChunkFunc func,
                                 gpointer user_data);

G_END_DECLS
