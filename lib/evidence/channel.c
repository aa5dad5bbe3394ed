/* Host side of the evidence channel (see channel.h and guest/protocol.h).
 *
 * A state machine over bytes and clock readings handed in by the caller: no
 * I/O, no threads, no clock reads, so every path can be driven by the unit
 * tests and the fuzzer exactly as a guest would drive it.
 *
 * Strictness is the point: the guest is not trusted, and any doubt about the
 * stream makes the run INCONCLUSIVE (a failing verdict), never silently
 * accepted.  The first anomaly is final and is the one reported. */
#define _GNU_SOURCE   /* mremap */

#include "config.h"

#include "channel.h"
#include "bounds-private.h"
#include "chain-private.h"
#include "frame-private.h"

#include "wire.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

/* The guest reports a Linux errno number; asm-generic numbering, the same on
 * x86_64 and aarch64 guests as on a Linux host. */
G_STATIC_ASSERT (EBUSY == 16);

typedef struct {
  guint8 *str;            /* NULL until the first byte; then mmap()ed, @cap bytes */
  gsize len;
  gsize cap;
} RawBuffer;

/* Appends @len bytes.  Aborts when memory runs out, as g_malloc() does:
 * losing evidence silently is not an option. */
static void
raw_buffer_append (RawBuffer *raw, const guint8 *data, gsize len)
{
  if (len > raw->cap - raw->len)
    {
      gsize cap = MAX (raw->cap, (gsize) 1 << 16);
      void *p;

      while (cap - raw->len < len)
        {
          if (cap > G_MAXSIZE / 2)
            g_error ("the evidence stream outgrew the address space");
          cap *= 2;
        }
      if (raw->str == NULL)
        p = mmap (NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      else
        p = mremap (raw->str, raw->cap, cap, MREMAP_MAYMOVE);
      if (p == MAP_FAILED)
        g_error ("cannot hold %" G_GSIZE_FORMAT " bytes of evidence stream: %s", cap,
                 g_strerror (errno));
      raw->str = p;
      raw->cap = cap;
      /* Huge pages where the kernel offers them on request: a page fault
       * per 2 MiB instead of per 4 KiB written.  Only a hint. */
      (void) madvise (raw->str, raw->cap, MADV_HUGEPAGE);
    }
  memcpy (raw->str + raw->len, data, len);
  raw->len += len;
}

static void
raw_buffer_clear (RawBuffer *raw)
{
  if (raw->str)
    (void) munmap (raw->str, raw->cap);
  raw->str = NULL;
  raw->len = raw->cap = 0;
}

struct _AirlockChannel {
  gint ref_count;         /* a run record keeps the channel of its run */
  guint8 nonce[AIRLOCK_NONCE_LEN];
  guint8 host_hello[AIRLOCK_HOST_HELLO_SIZE];
  GBytes *spec;           /* sent after the hello; NULL for the boot check */
  guint heartbeat_ms;
  guint tolerance_ms;

  AirlockChannelState state;
  AirlockAnomaly anomaly;
  char *reason;

  /* Every byte as received, in every state: the bundle stores it and
   * `airlock verify` re-derives the verdict from it.  Bounded by
   * AIRLOCK_BOUND_EVIDENCE_STREAM (see feed()).  Its own mapping, grown with mremap(), so
   * a long stream is never copied to grow (a realloc() from the heap copies
   * it each time it doubles, and faults in every page twice). */
  RawBuffer raw;
  GBytes *raw_bytes;      /* cache for get_raw(), dropped when raw grows */
  gsize frame_start;      /* offset in raw of the frame being received */

  guint64 next_seq;
  gint64 last_beat_mono_us;  /* hello or last heartbeat */
  guint64 last_beat_seq;
  guint64 heartbeat_count;
  guint64 event_count;

  AirlockChain chain;
  GPtrArray *frames;      /* AirlockFrame * */
  GPtrArray *log;         /* char *, escaped */

  gboolean have_hello;
  AirlockGuestHello hello;
  gboolean have_trailer;
  AirlockTrailer trailer;

  AirlockFrameFunc frame_func;
  gpointer frame_func_data;
  gboolean in_feed;
};

/* An accepted frame and the exactly-sized copy of its payload share one
 * allocation (instead of one each), the payload last, so it still ends
 * where the allocation does (see channel_accept_frame).  The payload's
 * GBytes owns the block: a reference to frame->payload stays valid after
 * the frame is freed. */
static AirlockFrame *
frame_new (const guint8 *payload, gsize len)
{
  guint8 *block = g_malloc (sizeof (AirlockFrame) + len);
  AirlockFrame *frame = (AirlockFrame *) block;

  /* Zeroed like a g_new0()'d frame; the payload is overwritten anyway. */
  memset (frame, 0, sizeof *frame);
  if (len > 0)
    memcpy (block + sizeof (AirlockFrame), payload, len);
  frame->payload = g_bytes_new_with_free_func (block + sizeof (AirlockFrame), len, g_free, block);
  return frame;
}

static void
frame_free (gpointer data)
{
  AirlockFrame *frame = data;

  /* Frees the frame too, with the last reference to its payload. */
  g_bytes_unref (frame->payload);
}

AirlockChannel *
airlock_channel_new (const guint8 *nonce, guint heartbeat_ms, guint tolerance_ms)
{
  AirlockChannel *channel;

  g_return_val_if_fail (nonce != NULL, NULL);

  channel = g_new0 (AirlockChannel, 1);
  channel->ref_count = 1;
  memcpy (channel->nonce, nonce, AIRLOCK_NONCE_LEN);
  channel->heartbeat_ms = heartbeat_ms;
  channel->tolerance_ms = tolerance_ms;
  /* Built by the same encoder the guest decodes with. */
  wire_host_hello (channel->host_hello, heartbeat_ms, channel->nonce);

  channel->state = AIRLOCK_CHANNEL_AWAITING_HELLO;
  channel->anomaly = AIRLOCK_ANOMALY_NONE;
  channel->frames = g_ptr_array_new_with_free_func (frame_free);
  channel->log = g_ptr_array_new_with_free_func (g_free);
  airlock_chain_init (&channel->chain, channel->host_hello, sizeof channel->host_hello);
  return channel;
}

AirlockChannel *
airlock_channel_new_random (guint heartbeat_ms, guint tolerance_ms)
{
  guint8 nonce[AIRLOCK_NONCE_LEN];
  gsize got = 0;

  /* The nonce is what ties the guest's hello to this run: it must be
   * unpredictable, so it comes from the kernel's CSPRNG (never GRand), and
   * there is no weaker fallback.  getrandom() blocks until the pool is
   * initialised; for 32 bytes it does not return short once it is, but a
   * signal can interrupt the wait. */
  while (got < sizeof nonce)
    {
      ssize_t n = getrandom (nonce + got, sizeof nonce - got, 0);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          g_error ("cannot draw a nonce for the evidence channel from getrandom(2): %s",
                   g_strerror (errno));
        }
      got += (gsize) n;
    }
  return airlock_channel_new (nonce, heartbeat_ms, tolerance_ms);
}

AirlockChannel *
airlock_channel_ref (AirlockChannel *channel)
{
  g_atomic_int_inc (&channel->ref_count);
  return channel;
}

void
airlock_channel_free (AirlockChannel *channel)
{
  if (channel == NULL || !g_atomic_int_dec_and_test (&channel->ref_count))
    return;

  g_free (channel->reason);
  g_clear_pointer (&channel->spec, g_bytes_unref);
  raw_buffer_clear (&channel->raw);
  g_clear_pointer (&channel->raw_bytes, g_bytes_unref);
  g_ptr_array_unref (channel->frames);
  g_ptr_array_unref (channel->log);
  g_free (channel->hello.arch);
  g_free (channel->hello.kernel_release);
  g_free (channel->hello.build_id_hex);
  g_free (channel);
}

void
airlock_channel_set_spec (AirlockChannel *channel, GBytes *spec)
{
  gsize spec_len;
  g_autoptr (GByteArray) seed = NULL;

  g_return_if_fail (channel != NULL);
  g_return_if_fail (spec != NULL);
  g_return_if_fail (g_bytes_get_size (spec) <= AIRLOCK_SPEC_MAX);
  /* The chain's seed cannot change once a frame may have been chained. */
  g_return_if_fail (channel->raw.len == 0 && channel->frames->len == 0);
  g_return_if_fail (channel->state == AIRLOCK_CHANNEL_AWAITING_HELLO);

  spec_len = g_bytes_get_size (spec);
  g_clear_pointer (&channel->spec, g_bytes_unref);
  if (spec_len > 0)
    channel->spec = g_bytes_ref (spec);
  wire_le32 (channel->host_hello + G_STRUCT_OFFSET (struct airlock_host_hello, spec_length),
             (guint32) spec_len);

  seed = g_byte_array_sized_new (AIRLOCK_HOST_HELLO_SIZE + (guint) spec_len);
  g_byte_array_append (seed, channel->host_hello, sizeof channel->host_hello);
  if (spec_len > 0)
    g_byte_array_append (seed, g_bytes_get_data (spec, NULL), (guint) spec_len);
  airlock_chain_init (&channel->chain, seed->data, seed->len);
}

GBytes *
airlock_channel_get_spec (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->spec;
}

const guint8 *
airlock_channel_get_host_hello (AirlockChannel *channel, gsize *ret_len)
{
  g_return_val_if_fail (channel != NULL, NULL);

  if (ret_len)
    *ret_len = sizeof channel->host_hello;
  return channel->host_hello;
}

const guint8 *
airlock_channel_get_nonce (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->nonce;
}

void
airlock_channel_set_frame_func (AirlockChannel *channel, AirlockFrameFunc func,
                                gpointer user_data)
{
  g_return_if_fail (channel != NULL);

  channel->frame_func = func;
  channel->frame_func_data = user_data;
}

static gboolean
channel_is_decoding (AirlockChannel *channel)
{
  return channel->state == AIRLOCK_CHANNEL_AWAITING_HELLO
         || channel->state == AIRLOCK_CHANNEL_OPEN;
}

/* Makes the channel INCONCLUSIVE with @anomaly and a sentence naming it.
 * Only the first anomaly counts: callers check the state first. */
static void channel_set_anomaly (AirlockChannel *channel, AirlockAnomaly anomaly,
                                 const char *format, ...) G_GNUC_PRINTF (3, 4);

static void
channel_set_anomaly (AirlockChannel *channel, AirlockAnomaly anomaly, const char *format, ...)
{
  va_list args;

  g_assert (anomaly != AIRLOCK_ANOMALY_NONE);
  g_assert (channel->state != AIRLOCK_CHANNEL_INCONCLUSIVE);

  va_start (args, format);
  channel->reason = g_strdup_vprintf (format, args);
  va_end (args);
  channel->anomaly = anomaly;
  channel->state = AIRLOCK_CHANNEL_INCONCLUSIVE;
}

static void
raw_append (AirlockChannel *channel, const guint8 *data, gsize len)
{
  if (len == 0)
    return;

  g_clear_pointer (&channel->raw_bytes, g_bytes_unref);
  raw_buffer_append (&channel->raw, data, len);
}

/* Once open, the guest must send a heartbeat at least every tolerance_ms
 * (counted from the hello, then from each heartbeat).  Other frames do not
 * reset the clock: a guest busy sending events is not proof that its
 * heartbeat, and so the supervisor's timer, is still alive. */
static void
channel_check_heartbeat (AirlockChannel *channel, gint64 mono_us)
{
  guint64 elapsed_us;
  guint64 tolerance_us = (guint64) channel->tolerance_ms * 1000;

  if (channel->state != AIRLOCK_CHANNEL_OPEN)
    return;
  /* A clock reading older than the last beat says nothing about a gap;
   * compare as unsigned so no pair of readings can overflow. */
  if (mono_us <= channel->last_beat_mono_us)
    return;
  elapsed_us = (guint64) mono_us - (guint64) channel->last_beat_mono_us;
  if (elapsed_us <= tolerance_us)
    return;

  if (channel->heartbeat_count == 0)
    channel_set_anomaly (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP,
                         "heartbeat gap: no heartbeat for %" G_GUINT64_FORMAT " ms since "
                         "the hello (frame 0), the tolerance is %u ms; the next frame was "
                         "due at byte %" G_GSIZE_FORMAT,
                         elapsed_us / 1000, channel->tolerance_ms, channel->frame_start);
  else
    channel_set_anomaly (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP,
                         "heartbeat gap: no heartbeat for %" G_GUINT64_FORMAT " ms since "
                         "heartbeat frame %" G_GUINT64_FORMAT ", the tolerance is %u ms; the "
                         "next frame was due at byte %" G_GSIZE_FORMAT,
                         elapsed_us / 1000, channel->last_beat_seq, channel->tolerance_ms,
                         channel->frame_start);
}

/* Checks a complete header against the state: the hello comes first and is
 * frame 0, then each frame is the previous one + 1.  Returns FALSE after
 * setting an anomaly. */
static gboolean
channel_check_header (AirlockChannel *channel, const AirlockFrameHeader *header)
{
  gsize at = channel->frame_start;

  if (channel->state == AIRLOCK_CHANNEL_AWAITING_HELLO)
    {
      if (header->type != AIRLOCK_FRAME_HELLO)
        {
          channel_set_anomaly (channel, AIRLOCK_ANOMALY_NO_HELLO,
                               "no hello: the first frame (frame %" G_GUINT64_FORMAT
                               " at byte %" G_GSIZE_FORMAT ") is a %s frame, not a hello",
                               header->seq, at, airlock_frame_type_to_string (header->type));
          return FALSE;
        }
      if (header->seq != 0)
        {
          channel_set_anomaly (channel, AIRLOCK_ANOMALY_NO_HELLO,
                               "no hello: the first frame is a hello numbered %" G_GUINT64_FORMAT
                               " at byte %" G_GSIZE_FORMAT ", but the hello must be frame 0",
                               header->seq, at);
          return FALSE;
        }
      return TRUE;
    }

  g_assert (channel->state == AIRLOCK_CHANNEL_OPEN);
  if (header->seq > channel->next_seq)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_SEQUENCE,
                           "sequence gap: expected frame %" G_GUINT64_FORMAT ", got frame %"
                           G_GUINT64_FORMAT " at byte %" G_GSIZE_FORMAT,
                           channel->next_seq, header->seq, at);
      return FALSE;
    }
  if (header->seq < channel->next_seq)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_SEQUENCE,
                           "sequence replay or reorder: expected frame %" G_GUINT64_FORMAT
                           ", got frame %" G_GUINT64_FORMAT " again at byte %" G_GSIZE_FORMAT,
                           channel->next_seq, header->seq, at);
      return FALSE;
    }
  if (header->type == AIRLOCK_FRAME_HELLO)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_MALFORMED,
                           "malformed stream: frame %" G_GUINT64_FORMAT " at byte %"
                           G_GSIZE_FORMAT " is a second hello; only frame 0 may be a hello",
                           header->seq, at);
      return FALSE;
    }
  return TRUE;
}

static char *
hex_encode (const guint8 *data, gsize len)
{
  static const char digits[] = "0123456789abcdef";
  char *hex = g_malloc (len * 2 + 1);

  for (gsize i = 0; i < len; i++)
    {
      hex[2 * i] = digits[data[i] >> 4];
      hex[2 * i + 1] = digits[data[i] & 0xf];
    }
  hex[len * 2] = '\0';
  return hex;
}

static gboolean
channel_check_hello (AirlockChannel *channel, const AirlockFrameTlvs *tlvs)
{
  const AirlockTlv *nonce = &tlvs->tlv[AIRLOCK_TLV_NONCE];
  guint32 second_open_errno;

  if (memcmp (nonce->value, channel->nonce, AIRLOCK_NONCE_LEN) != 0)
    {
      g_autofree char *got = hex_encode (nonce->value, AIRLOCK_NONCE_LEN);
      g_autofree char *expected = hex_encode (channel->nonce, AIRLOCK_NONCE_LEN);

      channel_set_anomaly (channel, AIRLOCK_ANOMALY_WRONG_NONCE,
                           "wrong nonce: the hello (frame 0 at byte %" G_GSIZE_FORMAT
                           ") echoes nonce %s, but this run's nonce is %s",
                           channel->frame_start, got, expected);
      return FALSE;
    }

  /* The supervisor proves nothing else in the guest can hold the port by
   * opening it a second time right after the first: only EBUSY shows the
   * port is exclusive and held. */
  second_open_errno = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_SECOND_OPEN_ERRNO]);
  if (second_open_errno == 0)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_NOT_EXCLUSIVE,
                           "not exclusive: the hello (frame 0 at byte %" G_GSIZE_FORMAT
                           ") says a second open of the evidence port succeeded "
                           "(errno 0), so another guest process could write to the channel; "
                           "expected EBUSY (%d)",
                           channel->frame_start, EBUSY);
      return FALSE;
    }
  if (tlvs->present[AIRLOCK_TLV_RECORDER]
      && !airlock_recorder_to_string (airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_RECORDER])))
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_MALFORMED,
                           "malformed: the hello (frame 0 at byte %" G_GSIZE_FORMAT ") names "
                           "recorder %" G_GUINT32_FORMAT ", which the protocol does not define",
                           channel->frame_start,
                           airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_RECORDER]));
      return FALSE;
    }
  if (second_open_errno != EBUSY)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_NOT_EXCLUSIVE,
                           "not exclusive: the hello (frame 0 at byte %" G_GSIZE_FORMAT
                           ") says a second open of the evidence port failed with errno %"
                           G_GUINT32_FORMAT ", not EBUSY (%d), so the port is not proven "
                           "exclusive",
                           channel->frame_start, second_open_errno, EBUSY);
      return FALSE;
    }
  return TRUE;
}

static void
channel_store_hello (AirlockChannel *channel, const AirlockFrameTlvs *tlvs)
{
  const AirlockTlv *arch = &tlvs->tlv[AIRLOCK_TLV_ARCH];
  const AirlockTlv *release = &tlvs->tlv[AIRLOCK_TLV_KERNEL_RELEASE];
  const AirlockTlv *build_id = &tlvs->tlv[AIRLOCK_TLV_BUILD_ID];

  /* Guest strings are arbitrary bytes: escaped, so they cannot break the
   * JSON, terminal or Markdown they end up in. */
  channel->hello.arch = airlock_evidence_escape_bytes (arch->value, arch->len);
  channel->hello.kernel_release = airlock_evidence_escape_bytes (release->value, release->len);
  channel->hello.build_id_hex = hex_encode (build_id->value, build_id->len);
  channel->hello.uptime_ns = airlock_tlv_get_u64 (&tlvs->tlv[AIRLOCK_TLV_UPTIME_NS]);
  channel->hello.second_open_errno =
    airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_SECOND_OPEN_ERRNO]);
  channel->hello.recorder = tlvs->present[AIRLOCK_TLV_RECORDER]
                              ? airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_RECORDER]) : 0;
  channel->have_hello = TRUE;
}

/* The trailer's counts must agree with what arrived: a frame the guest sent
 * but the host never saw (or the reverse) shows up here even when the
 * sequence numbers were consistent. */
static gboolean
channel_check_trailer (AirlockChannel *channel, const AirlockFrameHeader *header,
                       const AirlockFrameTlvs *tlvs, AirlockTrailer *ret_trailer)
{
  AirlockTrailer trailer;
  gsize at = channel->frame_start;

  trailer.frame_count = airlock_tlv_get_u64 (&tlvs->tlv[AIRLOCK_TLV_FRAME_COUNT]);
  trailer.heartbeat_count = airlock_tlv_get_u64 (&tlvs->tlv[AIRLOCK_TLV_HEARTBEAT_COUNT]);
  trailer.event_count = airlock_tlv_get_u64 (&tlvs->tlv[AIRLOCK_TLV_EVENT_COUNT]);
  trailer.exit_status = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_EXIT_STATUS]);
  trailer.end_reason = airlock_tlv_get_u32 (&tlvs->tlv[AIRLOCK_TLV_END_REASON]);
  trailer.has_records_lost = tlvs->present[AIRLOCK_TLV_RECORDS_LOST];
  trailer.records_lost = trailer.has_records_lost
                           ? airlock_tlv_get_u64 (&tlvs->tlv[AIRLOCK_TLV_RECORDS_LOST]) : 0;

  /* Frames are numbered from 0, so the trailer's seq is the number of frames
   * before it (and the sequence check made that the number received). */
  if (trailer.frame_count != header->seq)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_TRAILER_MISMATCH,
                           "trailer mismatch: frame-count says %" G_GUINT64_FORMAT " frames "
                           "were sent, expected %" G_GUINT64_FORMAT " (frames before the "
                           "trailer), in frame %" G_GUINT64_FORMAT " at byte %" G_GSIZE_FORMAT,
                           trailer.frame_count, header->seq, header->seq, at);
      return FALSE;
    }
  if (trailer.heartbeat_count != channel->heartbeat_count)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_TRAILER_MISMATCH,
                           "trailer mismatch: heartbeat-count says %" G_GUINT64_FORMAT
                           " heartbeats were sent, expected %" G_GUINT64_FORMAT
                           " (heartbeats received), in frame %" G_GUINT64_FORMAT " at byte %"
                           G_GSIZE_FORMAT,
                           trailer.heartbeat_count, channel->heartbeat_count, header->seq, at);
      return FALSE;
    }
  if (trailer.event_count != channel->event_count)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_TRAILER_MISMATCH,
                           "trailer mismatch: event-count says %" G_GUINT64_FORMAT
                           " events were sent, expected %" G_GUINT64_FORMAT
                           " (events received), in frame %" G_GUINT64_FORMAT " at byte %"
                           G_GSIZE_FORMAT,
                           trailer.event_count, channel->event_count, header->seq, at);
      return FALSE;
    }
  if (trailer.end_reason < AIRLOCK_END_COMPLETED || trailer.end_reason > AIRLOCK_END_WALL_LIMIT)
    {
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_TRAILER_MISMATCH,
                           "trailer mismatch: end-reason is %" G_GUINT32_FORMAT ", expected "
                           "1 (completed), 2 (timeout), 3 (error) or 4 (wall-time limit), in frame %"
                           G_GUINT64_FORMAT " at byte %" G_GSIZE_FORMAT,
                           trailer.end_reason, header->seq, at);
      return FALSE;
    }

  *ret_trailer = trailer;
  return TRUE;
}

/* Checks a complete frame (@size bytes at @bytes, the header already
 * checked) and, if it is acceptable, records it, chains it and reports it.
 * Returns FALSE after setting an anomaly. */
static gboolean
channel_accept_frame (AirlockChannel *channel, const AirlockFrameHeader *header,
                      const guint8 *bytes, gsize size, gint64 mono_us, gint64 real_us)
{
  gsize payload_len = size - AIRLOCK_FRAME_HEADER_SIZE;
  AirlockFrame *frame;
  const guint8 *payload;
  gsize at = channel->frame_start;
  AirlockFrameTlvs tlvs;
  AirlockTrailer trailer = { 0 };
  g_autofree char *problem = NULL;

  g_assert (payload_len == header->length);

  /* The TLVs are parsed from an exactly-sized copy (the one the frame keeps),
   * not from the raw buffer: the parser cannot see past the payload, and an
   * overread, were there one, would hit the allocator's bounds (and the
   * fuzzer's sanitizers) instead of the next frame's bytes. */
  frame = frame_new (bytes + AIRLOCK_FRAME_HEADER_SIZE, payload_len);
  payload = g_bytes_get_data (frame->payload, NULL);

  if (!airlock_frame_parse_tlvs (header->type, payload, payload_len,
                                 at + AIRLOCK_FRAME_HEADER_SIZE, &tlvs, &problem))
    {
      frame_free (frame);
      channel_set_anomaly (channel, AIRLOCK_ANOMALY_MALFORMED,
                           "malformed %s frame %" G_GUINT64_FORMAT " at byte %" G_GSIZE_FORMAT
                           ": %s",
                           airlock_frame_type_to_string (header->type), header->seq, at,
                           problem);
      return FALSE;
    }

  /* Checks first, then every side effect, so a rejected frame leaves no
   * trace but its raw bytes. */
  switch (header->type)
    {
    case AIRLOCK_FRAME_HELLO:
      if (!channel_check_hello (channel, &tlvs))
        {
          frame_free (frame);
          return FALSE;
        }
      channel_store_hello (channel, &tlvs);
      channel->state = AIRLOCK_CHANNEL_OPEN;
      channel->last_beat_mono_us = mono_us;
      channel->last_beat_seq = header->seq;
      break;
    case AIRLOCK_FRAME_HEARTBEAT:
      channel->heartbeat_count++;
      channel->last_beat_mono_us = mono_us;
      channel->last_beat_seq = header->seq;
      break;
    case AIRLOCK_FRAME_LOG:
      {
        const AirlockTlv *message = &tlvs.tlv[AIRLOCK_TLV_MESSAGE];

        g_ptr_array_add (channel->log,
                         airlock_evidence_escape_bytes (message->value, message->len));
      }
      break;
    case AIRLOCK_FRAME_EVENT:
      channel->event_count++;
      break;
    case AIRLOCK_FRAME_TRAILER:
      if (!channel_check_trailer (channel, header, &tlvs, &trailer))
        {
          frame_free (frame);
          return FALSE;
        }
      channel->trailer = trailer;
      channel->have_trailer = TRUE;
      channel->state = AIRLOCK_CHANNEL_COMPLETE;
      break;
    default:
      g_assert_not_reached ();
    }

  channel->next_seq = header->seq + 1;
  airlock_chain_append (&channel->chain, bytes, size);

  frame->seq = header->seq;
  frame->type = header->type;
  frame->offset = at;
  frame->size = size;
  frame->received_mono_us = mono_us;
  frame->received_real_us = real_us;
  memcpy (frame->chain, channel->chain.value, sizeof frame->chain);
  g_ptr_array_add (channel->frames, frame);

  channel->frame_start += size;

  if (channel->frame_func)
    {
      /* The frame func usually hands EVENT frames to the event log, which
       * would check these same bytes again: it may use this check. */
      AirlockCheckedPayload checked = { frame->payload, frame->type, &tlvs };
      const AirlockCheckedPayload *outer = airlock_frame_publish_checked (&checked);

      channel->frame_func (channel, frame, channel->frame_func_data);
      airlock_frame_publish_checked (outer);
    }
  return TRUE;
}

/* Decodes every complete frame between frame_start and the end of raw,
 * stopping at a partial frame or at the first anomaly. */
static void
channel_decode (AirlockChannel *channel, gint64 mono_us, gint64 real_us)
{
  while (channel_is_decoding (channel))
    {
      gsize avail = channel->raw.len - channel->frame_start;
      gsize at = channel->frame_start;
      const guint8 *bytes;
      AirlockFrameHeader header;
      guint bad = 0;

      /* Before any pointer arithmetic: an empty first read leaves the
       * stream unmapped (NULL), and NULL + 0 is undefined in C. */
      if (avail == 0)
        return;
      bytes = channel->raw.str + channel->frame_start;

      switch (airlock_frame_parse_header (bytes, avail, &header, &bad))
        {
        case AIRLOCK_HEADER_INCOMPLETE:
          return;
        case AIRLOCK_HEADER_BAD_MAGIC:
          channel_set_anomaly (channel, AIRLOCK_ANOMALY_BAD_MAGIC,
                               "bad magic at byte %" G_GSIZE_FORMAT ", where frame %"
                               G_GUINT64_FORMAT " should start: expected \"" AIRLOCK_FRAME_MAGIC
                               "\", but byte %" G_GSIZE_FORMAT " is 0x%02x",
                               at, channel->next_seq, at + bad, bytes[bad]);
          return;
        case AIRLOCK_HEADER_BAD_VERSION:
          channel_set_anomaly (channel, AIRLOCK_ANOMALY_BAD_VERSION,
                               "bad version: frame %" G_GUINT64_FORMAT " at byte %" G_GSIZE_FORMAT
                               " has protocol version %u, this host speaks only version %d",
                               channel->next_seq, at, bad, AIRLOCK_PROTO_VERSION);
          return;
        case AIRLOCK_HEADER_UNKNOWN_TYPE:
          channel_set_anomaly (channel, AIRLOCK_ANOMALY_UNKNOWN_TYPE,
                               "unknown frame type: frame %" G_GUINT64_FORMAT " at byte %"
                               G_GSIZE_FORMAT " has type %u",
                               channel->next_seq, at, bad);
          return;
        case AIRLOCK_HEADER_OVERSIZE:
          channel_set_anomaly (channel, AIRLOCK_ANOMALY_OVERSIZE,
                               "oversize frame: frame %" G_GUINT64_FORMAT " at byte %"
                               G_GSIZE_FORMAT " declares a payload of %u bytes, the limit is %d",
                               channel->next_seq, at, bad, AIRLOCK_FRAME_MAX_PAYLOAD);
          return;
        case AIRLOCK_HEADER_COMPLETE:
          break;
        default:
          g_assert_not_reached ();
        }

      if (!channel_check_header (channel, &header))
        return;
      if (avail - AIRLOCK_FRAME_HEADER_SIZE < header.length)
        return;
      if (!channel_accept_frame (channel, &header, bytes,
                                 AIRLOCK_FRAME_HEADER_SIZE + header.length, mono_us, real_us))
        return;

      /* The frame func may have ended the run; and a trailer ends decoding,
       * so whatever follows it in this same read is already too much.  The
       * reason names where the extra bytes start, not how many came in this
       * read, so it does not depend on how the stream was split. */
      if (channel->state == AIRLOCK_CHANNEL_COMPLETE
          && channel->frame_start < channel->raw.len)
        channel_set_anomaly (channel, AIRLOCK_ANOMALY_AFTER_TRAILER,
                             "data after the trailer: more bytes arrived at byte %"
                             G_GSIZE_FORMAT ", after trailer frame %" G_GUINT64_FORMAT,
                             channel->frame_start, header.seq);
    }
}

void
airlock_channel_feed (AirlockChannel *channel, const guint8 *data, gsize len, gint64 mono_us,
                      gint64 real_us)
{
  gsize at, kept;

  g_return_if_fail (channel != NULL);
  g_return_if_fail (data != NULL || len == 0);
  /* The frame func runs inside feed(); feeding from there would decode
   * the same bytes twice. */
  g_return_if_fail (!channel->in_feed);

  at = channel->raw.len;
  /* Reaching the bound (not only passing it) ends the run, so a replay of
   * the bytes kept, which stops exactly at the bound, ends the same. */
  kept = MIN (len, AIRLOCK_BOUND_EVIDENCE_STREAM - MIN (at, AIRLOCK_BOUND_EVIDENCE_STREAM));
  raw_append (channel, data, kept);

  if (channel->state == AIRLOCK_CHANNEL_COMPLETE)
    {
      if (len > 0)
        channel_set_anomaly (channel, AIRLOCK_ANOMALY_AFTER_TRAILER,
                             "data after the trailer: more bytes arrived at byte %"
                             G_GSIZE_FORMAT ", after trailer frame %" G_GUINT64_FORMAT,
                             at, channel->trailer.frame_count);
      return;
    }
  if (!channel_is_decoding (channel))
    return;

  /* The deadline is judged as of this read, before its bytes count: a
   * heartbeat that arrives after the tolerance is a gap all the same. */
  channel_check_heartbeat (channel, mono_us);

  channel->in_feed = TRUE;
  channel_decode (channel, mono_us, real_us);
  channel->in_feed = FALSE;

  /* Whatever was decoded up to the bound counts; then the run ends.  (A
   * stream at its bound that is already final was ended by the trailer's
   * extra bytes or an earlier anomaly.) */
  if (channel->raw.len >= AIRLOCK_BOUND_EVIDENCE_STREAM
      && channel->state != AIRLOCK_CHANNEL_INCONCLUSIVE)
    channel_set_anomaly (channel, AIRLOCK_ANOMALY_BOUND,
                         "the evidence stream reached its bound of %" G_GSIZE_FORMAT
                         " bytes after frame %" G_GUINT64_FORMAT ": the rest was not kept",
                         AIRLOCK_BOUND_EVIDENCE_STREAM,
                         channel->next_seq > 0 ? channel->next_seq - 1 : 0);
}

void
airlock_channel_check_time (AirlockChannel *channel, gint64 mono_us)
{
  g_return_if_fail (channel != NULL);

  channel_check_heartbeat (channel, mono_us);
}

void
airlock_channel_close (AirlockChannel *channel, gint64 mono_us)
{
  gsize partial;

  g_return_if_fail (channel != NULL);
  g_return_if_fail (!channel->in_feed);

  /* A guest that stopped beating and then closed stalled first: report
   * the earlier anomaly. */
  channel_check_heartbeat (channel, mono_us);

  partial = channel->raw.len - channel->frame_start;
  switch (channel->state)
    {
    case AIRLOCK_CHANNEL_AWAITING_HELLO:
      if (partial == 0)
        channel_set_anomaly (channel, AIRLOCK_ANOMALY_NO_HELLO,
                             "no hello: the channel closed before any hello");
      else
        channel_set_anomaly (channel, AIRLOCK_ANOMALY_NO_HELLO,
                             "no hello: the channel closed before any hello, inside a partial "
                             "frame of %" G_GSIZE_FORMAT " bytes at byte %" G_GSIZE_FORMAT,
                             partial, channel->frame_start);
      break;
    case AIRLOCK_CHANNEL_OPEN:
      if (partial == 0)
        channel_set_anomaly (channel, AIRLOCK_ANOMALY_CLOSED_EARLY,
                             "closed early: the channel closed after frame %" G_GUINT64_FORMAT
                             " at byte %" G_GSIZE_FORMAT ", before any trailer",
                             channel->next_seq - 1, channel->frame_start);
      else
        channel_set_anomaly (channel, AIRLOCK_ANOMALY_CLOSED_EARLY,
                             "closed early: the channel closed after frame %" G_GUINT64_FORMAT
                             ", before any trailer, inside a partial frame of %" G_GSIZE_FORMAT
                             " bytes at byte %" G_GSIZE_FORMAT,
                             channel->next_seq - 1, partial, channel->frame_start);
      break;
    case AIRLOCK_CHANNEL_COMPLETE:
    case AIRLOCK_CHANNEL_INCONCLUSIVE:
      break;
    default:
      g_assert_not_reached ();
    }
}

void
airlock_channel_fail (AirlockChannel *channel, AirlockAnomaly anomaly, const char *reason)
{
  g_return_if_fail (channel != NULL);
  g_return_if_fail (anomaly != AIRLOCK_ANOMALY_NONE);
  g_return_if_fail (reason != NULL);

  if (channel->state == AIRLOCK_CHANNEL_COMPLETE
      || channel->state == AIRLOCK_CHANNEL_INCONCLUSIVE)
    return;
  channel_set_anomaly (channel, anomaly, "%s", reason);
}

AirlockChannelState
airlock_channel_get_state (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, AIRLOCK_CHANNEL_INCONCLUSIVE);
  return channel->state;
}

AirlockAnomaly
airlock_channel_get_anomaly (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, AIRLOCK_ANOMALY_NONE);
  return channel->anomaly;
}

const char *
airlock_channel_get_reason (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->reason;
}

const char *
airlock_anomaly_to_string (AirlockAnomaly anomaly)
{
  switch (anomaly)
    {
    case AIRLOCK_ANOMALY_NONE:
      return "none";
    case AIRLOCK_ANOMALY_NO_HELLO:
      return "no-hello";
    case AIRLOCK_ANOMALY_WRONG_NONCE:
      return "wrong-nonce";
    case AIRLOCK_ANOMALY_BAD_MAGIC:
      return "bad-magic";
    case AIRLOCK_ANOMALY_BAD_VERSION:
      return "bad-version";
    case AIRLOCK_ANOMALY_OVERSIZE:
      return "oversize";
    case AIRLOCK_ANOMALY_MALFORMED:
      return "malformed";
    case AIRLOCK_ANOMALY_UNKNOWN_TYPE:
      return "unknown-type";
    case AIRLOCK_ANOMALY_SEQUENCE:
      return "sequence";
    case AIRLOCK_ANOMALY_HEARTBEAT_GAP:
      return "heartbeat-gap";
    case AIRLOCK_ANOMALY_CLOSED_EARLY:
      return "closed-early";
    case AIRLOCK_ANOMALY_TRAILER_MISMATCH:
      return "trailer-mismatch";
    case AIRLOCK_ANOMALY_AFTER_TRAILER:
      return "after-trailer";
    case AIRLOCK_ANOMALY_NOT_EXCLUSIVE:
      return "not-exclusive";
    case AIRLOCK_ANOMALY_EXTERNAL:
      return "external";
    case AIRLOCK_ANOMALY_BOUND:
      return "bound";
    default:
      g_return_val_if_reached ("invalid");
    }
}

GBytes *
airlock_channel_get_raw (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);

  if (channel->raw_bytes == NULL)
    channel->raw_bytes = g_bytes_new (channel->raw.str, channel->raw.len);
  return channel->raw_bytes;
}

GPtrArray *
airlock_channel_get_frames (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->frames;
}

const guint8 *
airlock_channel_get_chain_head (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->chain.value;
}

const AirlockGuestHello *
airlock_channel_get_hello (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->have_hello ? &channel->hello : NULL;
}

const AirlockTrailer *
airlock_channel_get_trailer (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->have_trailer ? &channel->trailer : NULL;
}

guint64
airlock_channel_get_heartbeat_count (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, 0);
  return channel->heartbeat_count;
}

GPtrArray *
airlock_channel_get_log (AirlockChannel *channel)
{
  g_return_val_if_fail (channel != NULL, NULL);
  return channel->log;
}

const char *
airlock_recorder_to_string (guint32 recorder)
{
  switch (recorder)
    {
    case AIRLOCK_RECORDER_SECCOMP:
      return "seccomp";
    case AIRLOCK_RECORDER_HOOKS:
      return "bpf-lsm+seccomp";
    case AIRLOCK_RECORDER_KPROBE:
      return "bpf-kprobe+seccomp";
    default:
      return NULL;
    }
}
