/* Frame encoder for the evidence protocol (see protocol.h).
 *
 * Header-only, no GLib, no allocation: used by the guest programs to write
 * frames and by host tests and fuzz seeds to build byte fixtures, so both
 * sides agree on the encoding by construction. */
#ifndef AIRLOCK_WIRE_H
#define AIRLOCK_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "protocol.h"

struct wire_frame {
  uint8_t bytes[AIRLOCK_FRAME_HEADER_SIZE + AIRLOCK_FRAME_MAX_PAYLOAD];
  size_t len;      /* header + payload so far */
  int overflow;    /* a put did not fit: the frame must not be sent */
};

static inline void
wire_le16 (uint8_t *p, uint16_t v)
{
  p[0] = (uint8_t) v;
  p[1] = (uint8_t) (v >> 8);
}

static inline void
wire_le32 (uint8_t *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t) (v >> (8 * i));
}

static inline void
wire_le64 (uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint16_t
wire_get_le16 (const uint8_t *p)
{
  return (uint16_t) (p[0] | (p[1] << 8));
}

static inline uint32_t
wire_get_le32 (const uint8_t *p)
{
  return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

static inline uint64_t
wire_get_le64 (const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* Starts a frame of @type with sequence number @seq. */
static inline void
wire_begin (struct wire_frame *f, uint8_t type, uint64_t seq)
{
  memcpy (f->bytes, AIRLOCK_FRAME_MAGIC, 4);
  f->bytes[4] = AIRLOCK_PROTO_VERSION;
  f->bytes[5] = type;
  wire_le16 (f->bytes + 6, 0);
  wire_le64 (f->bytes + 8, seq);
  f->len = AIRLOCK_FRAME_HEADER_SIZE;
  f->overflow = 0;
}

/* Appends one TLV; sets overflow (and appends nothing) when it does not fit. */
static inline void
wire_put (struct wire_frame *f, uint16_t tag, const void *value, size_t len)
{
  if (f->overflow || len > 0xffff
      || f->len + AIRLOCK_TLV_HEADER_SIZE + len > sizeof f->bytes)
    {
      f->overflow = 1;
      return;
    }
  wire_le16 (f->bytes + f->len, tag);
  wire_le16 (f->bytes + f->len + 2, (uint16_t) len);
  if (len)
    memcpy (f->bytes + f->len + AIRLOCK_TLV_HEADER_SIZE, value, len);
  f->len += AIRLOCK_TLV_HEADER_SIZE + len;
}

static inline void
wire_put_u32 (struct wire_frame *f, uint16_t tag, uint32_t v)
{
  uint8_t b[4];
  wire_le32 (b, v);
  wire_put (f, tag, b, 4);
}

static inline void
wire_put_u64 (struct wire_frame *f, uint16_t tag, uint64_t v)
{
  uint8_t b[8];
  wire_le64 (b, v);
  wire_put (f, tag, b, 8);
}

static inline void
wire_put_str (struct wire_frame *f, uint16_t tag, const char *s)
{
  wire_put (f, tag, s, strlen (s));
}

/* Finishes the frame (writes its payload length).  Returns the number of
 * bytes to send, or 0 when a put overflowed. */
static inline size_t
wire_end (struct wire_frame *f)
{
  if (f->overflow)
    return 0;
  wire_le16 (f->bytes + 6, (uint16_t) (f->len - AIRLOCK_FRAME_HEADER_SIZE));
  return f->len;
}

/* Fills a host hello (48 bytes) into @out. */
static inline void
wire_host_hello (uint8_t out[AIRLOCK_HOST_HELLO_SIZE], uint32_t heartbeat_ms,
                 const uint8_t nonce[AIRLOCK_NONCE_LEN])
{
  memset (out, 0, AIRLOCK_HOST_HELLO_SIZE);
  memcpy (out, AIRLOCK_HOST_HELLO_MAGIC, 4);
  out[4] = AIRLOCK_PROTO_VERSION;
  wire_le32 (out + 8, heartbeat_ms);
  memcpy (out + 16, nonce, AIRLOCK_NONCE_LEN);
}

#endif /* AIRLOCK_WIRE_H */
