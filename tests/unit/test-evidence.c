/* Unit tests for lib/evidence: the host side of the evidence channel.
 *
 * Fixtures are built with guest/wire.h, the encoder the guest itself uses,
 * so these streams are what a real guest sends (or a hostile one could).
 * Every anomaly case is fed both in one read and one byte at a time: the
 * verdict must not depend on how the transport split the stream. */
#include "config.h"

#include "bounds-private.h"
#include "bundle/bundle.h"
#include "evidence/channel.h"
#include "evidence/event.h"
#include "evidence/frame-private.h"

#include "wire.h"

#include <errno.h>
#include <string.h>

#define HEARTBEAT_MS 1000
#define TOLERANCE_MS 3000
#define T0 1000000           /* monotonic µs of the fixtures' reads */
#define REAL0 1700000000000000

static const guint8 test_nonce[AIRLOCK_NONCE_LEN] = {
  0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
  0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
};

static const guint8 test_build_id[20] = {
  0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
  0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
};

/* ---- stream fixtures ---- */

typedef struct {
  GByteArray *bytes;
  GArray *offsets;       /* gsize: where each frame starts */
  guint64 seq;           /* of the next frame */
  guint64 heartbeats;
  guint64 events;
  struct wire_frame frame;
} Stream;

static Stream *
stream_new (void)
{
  Stream *s = g_new0 (Stream, 1);

  s->bytes = g_byte_array_new ();
  s->offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  return s;
}

static void
stream_free (Stream *s)
{
  g_byte_array_unref (s->bytes);
  g_array_unref (s->offsets);
  g_free (s);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Stream, stream_free)

static struct wire_frame *
stream_begin (Stream *s, guint8 type)
{
  wire_begin (&s->frame, type, s->seq);
  return &s->frame;
}

/* Ends the frame begun last, appends it and returns its offset. */
static gsize
stream_end (Stream *s)
{
  gsize offset = s->bytes->len;
  size_t n = wire_end (&s->frame);

  g_assert_cmpuint (n, >, 0);
  g_byte_array_append (s->bytes, s->frame.bytes, (guint) n);
  g_array_append_val (s->offsets, offset);
  s->seq++;
  return offset;
}

static void
stream_raw (Stream *s, const void *data, gsize len)
{
  g_byte_array_append (s->bytes, data, (guint) len);
}

static void
put_hello_tlvs (struct wire_frame *f, const guint8 *nonce, guint32 second_open_errno)
{
  wire_put (f, AIRLOCK_TLV_NONCE, nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (f, AIRLOCK_TLV_ARCH, "x86_64");
  wire_put_str (f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0-airlock");
  wire_put (f, AIRLOCK_TLV_BUILD_ID, test_build_id, sizeof test_build_id);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 123456789);
  wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, second_open_errno);
}

static gsize
stream_hello_with (Stream *s, const guint8 *nonce, guint32 second_open_errno)
{
  put_hello_tlvs (stream_begin (s, AIRLOCK_FRAME_HELLO), nonce, second_open_errno);
  return stream_end (s);
}

static gsize
stream_hello (Stream *s)
{
  return stream_hello_with (s, test_nonce, EBUSY);
}

static gsize
stream_heartbeat (Stream *s)
{
  wire_put_u64 (stream_begin (s, AIRLOCK_FRAME_HEARTBEAT), AIRLOCK_TLV_UPTIME_NS,
                1000000000ull * (s->heartbeats + 1));
  s->heartbeats++;
  return stream_end (s);
}

static gsize
stream_log (Stream *s, const char *message)
{
  wire_put_str (stream_begin (s, AIRLOCK_FRAME_LOG), AIRLOCK_TLV_MESSAGE, message);
  return stream_end (s);
}

static gsize
stream_event (Stream *s)
{
  struct wire_frame *f = stream_begin (s, AIRLOCK_FRAME_EVENT);
  guint8 args[48] = { 0 };

  /* A minimal traced call: the tags every syscall event must carry. */
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 2000000000ull + s->seq);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
  wire_put_u32 (f, AIRLOCK_TLV_EV_SYSCALL, 42);            /* x86_64 connect */
  wire_put_u32 (f, AIRLOCK_TLV_EV_AUDIT_ARCH, 0xc000003e); /* AUDIT_ARCH_X86_64 */
  wire_put (f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 100);
  wire_put_u32 (f, AIRLOCK_TLV_EV_TID, 100);
  s->events++;
  return stream_end (s);
}

static gsize
stream_trailer_with (Stream *s, guint64 frame_count, guint64 heartbeat_count,
                     guint64 event_count, guint32 end_reason)
{
  struct wire_frame *f = stream_begin (s, AIRLOCK_FRAME_TRAILER);

  wire_put_u64 (f, AIRLOCK_TLV_FRAME_COUNT, frame_count);
  wire_put_u64 (f, AIRLOCK_TLV_HEARTBEAT_COUNT, heartbeat_count);
  wire_put_u64 (f, AIRLOCK_TLV_EVENT_COUNT, event_count);
  wire_put_u32 (f, AIRLOCK_TLV_EXIT_STATUS, 7 << 8);
  wire_put_u32 (f, AIRLOCK_TLV_END_REASON, end_reason);
  return stream_end (s);
}

/* A trailer whose counts match what the stream sent. */
static gsize
stream_trailer (Stream *s)
{
  return stream_trailer_with (s, s->seq, s->heartbeats, s->events, AIRLOCK_END_COMPLETED);
}

/* hello, heartbeat, log, event, heartbeat, event, trailer. */
static Stream *
valid_stream (void)
{
  Stream *s = stream_new ();

  stream_hello (s);
  stream_heartbeat (s);
  stream_log (s, "supervisor: starting /usr/bin/app");
  stream_event (s);
  stream_heartbeat (s);
  stream_event (s);
  stream_trailer (s);
  return s;
}

/* ---- channel helpers ---- */

static AirlockChannel *
test_channel_new (void)
{
  return airlock_channel_new (test_nonce, HEARTBEAT_MS, TOLERANCE_MS);
}

/* Feeds @len bytes in reads of @chunk bytes (0: all at once), all at @mono. */
static void
feed_chunked (AirlockChannel *channel, const guint8 *data, gsize len, gsize chunk, gint64 mono)
{
  gsize pos = 0;

  if (chunk == 0)
    chunk = MAX (len, 1);
  do
    {
      gsize n = MIN (chunk, len - pos);

      airlock_channel_feed (channel, data + pos, n, mono, REAL0 + (mono - T0));
      pos += n;
    }
  while (pos < len);
}

static AirlockChannel *
channel_from_stream (const Stream *s, gsize chunk)
{
  AirlockChannel *channel = test_channel_new ();

  feed_chunked (channel, s->bytes->data, s->bytes->len, chunk, T0);
  return channel;
}

static void
assert_raw_equals (AirlockChannel *channel, const guint8 *data, gsize len)
{
  GBytes *raw = airlock_channel_get_raw (channel);

  g_assert_nonnull (raw);
  g_assert_cmpmem (g_bytes_get_data (raw, NULL), g_bytes_get_size (raw), data, len);
}

static void
assert_inconclusive (AirlockChannel *channel, AirlockAnomaly anomaly)
{
  const char *reason = airlock_channel_get_reason (channel);

  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_INCONCLUSIVE);
  g_assert_cmpstr (airlock_anomaly_to_string (airlock_channel_get_anomaly (channel)), ==,
                   airlock_anomaly_to_string (anomaly));
  g_assert_nonnull (reason);
  g_test_message ("reason: %s", reason);
}

static void
assert_reason_contains (AirlockChannel *channel, const char *needle)
{
  const char *reason = airlock_channel_get_reason (channel);

  g_assert_nonnull (reason);
  if (strstr (reason, needle) == NULL)
    g_error ("reason '%s' does not mention '%s'", reason, needle);
}

static void
assert_frames_equal (AirlockChannel *a, AirlockChannel *b)
{
  GPtrArray *fa = airlock_channel_get_frames (a);
  GPtrArray *fb = airlock_channel_get_frames (b);

  g_assert_cmpuint (fa->len, ==, fb->len);
  for (guint i = 0; i < fa->len; i++)
    {
      const AirlockFrame *x = fa->pdata[i];
      const AirlockFrame *y = fb->pdata[i];

      g_assert_cmpuint (x->seq, ==, y->seq);
      g_assert_cmpuint (x->type, ==, y->type);
      g_assert_cmpuint (x->offset, ==, y->offset);
      g_assert_cmpuint (x->size, ==, y->size);
      g_assert_true (g_bytes_equal (x->payload, y->payload));
      g_assert_cmpmem (x->chain, 32, y->chain, 32);
    }
  g_assert_cmpmem (airlock_channel_get_chain_head (a), 32,
                   airlock_channel_get_chain_head (b), 32);
}

/* ---- valid streams ---- */

typedef struct {
  GArray *seqs;
  GPtrArray *frames;
  AirlockChannelState state_at_last;
} FrameLog;

static void
record_frame (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  FrameLog *log = user_data;

  g_array_append_val (log->seqs, frame->seq);
  g_ptr_array_add (log->frames, (gpointer) frame);
  log->state_at_last = airlock_channel_get_state (channel);
}

static void
test_valid_stream_completes (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();
  FrameLog log = { g_array_new (FALSE, FALSE, sizeof (guint64)), g_ptr_array_new (), 0 };
  const AirlockGuestHello *hello;
  const AirlockTrailer *trailer;
  GPtrArray *frames;
  GPtrArray *messages;
  gsize payload_total = 0;

  airlock_channel_set_frame_func (channel, record_frame, &log);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_AWAITING_HELLO);
  g_assert_null (airlock_channel_get_hello (channel));
  feed_chunked (channel, s->bytes->data, s->bytes->len, 0, T0);

  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  g_assert_cmpint (airlock_channel_get_anomaly (channel), ==, AIRLOCK_ANOMALY_NONE);
  g_assert_null (airlock_channel_get_reason (channel));

  hello = airlock_channel_get_hello (channel);
  g_assert_nonnull (hello);
  g_assert_cmpstr (hello->arch, ==, "x86_64");
  g_assert_cmpstr (hello->kernel_release, ==, "6.1.0-airlock");
  g_assert_cmpstr (hello->build_id_hex, ==, "deadbeef0102030405060708090a0b0c0d0e0f10");
  g_assert_cmpuint (hello->uptime_ns, ==, 123456789);
  g_assert_cmpuint (hello->second_open_errno, ==, EBUSY);

  trailer = airlock_channel_get_trailer (channel);
  g_assert_nonnull (trailer);
  g_assert_cmpuint (trailer->frame_count, ==, 6);
  g_assert_cmpuint (trailer->heartbeat_count, ==, 2);
  g_assert_cmpuint (trailer->event_count, ==, 2);
  g_assert_cmpuint (trailer->exit_status, ==, 7 << 8);
  g_assert_cmpuint (trailer->end_reason, ==, AIRLOCK_END_COMPLETED);
  g_assert_cmpuint (airlock_channel_get_heartbeat_count (channel), ==, 2);

  messages = airlock_channel_get_log (channel);
  g_assert_cmpuint (messages->len, ==, 1);
  g_assert_cmpstr (messages->pdata[0], ==, "supervisor: starting /usr/bin/app");

  frames = airlock_channel_get_frames (channel);
  g_assert_cmpuint (frames->len, ==, 7);
  for (guint i = 0; i < frames->len; i++)
    {
      const AirlockFrame *frame = frames->pdata[i];
      gsize payload_len = g_bytes_get_size (frame->payload);

      g_assert_cmpuint (frame->seq, ==, i);
      g_assert_cmpuint (frame->offset, ==, g_array_index (s->offsets, gsize, i));
      g_assert_cmpuint (frame->size, ==, AIRLOCK_FRAME_HEADER_SIZE + payload_len);
      g_assert_cmpmem (g_bytes_get_data (frame->payload, NULL), payload_len,
                       s->bytes->data + frame->offset + AIRLOCK_FRAME_HEADER_SIZE, payload_len);
      g_assert_cmpint (frame->received_mono_us, ==, T0);
      g_assert_cmpint (frame->received_real_us, ==, REAL0);
      /* the frame func saw this very frame, in order */
      g_assert_true (log.frames->pdata[i] == frame);
      g_assert_cmpuint (g_array_index (log.seqs, guint64, i), ==, i);
      payload_total += frame->size;
    }
  g_assert_cmpuint (((const AirlockFrame *) frames->pdata[0])->type, ==, AIRLOCK_FRAME_HELLO);
  g_assert_cmpuint (((const AirlockFrame *) frames->pdata[6])->type, ==, AIRLOCK_FRAME_TRAILER);
  g_assert_cmpuint (payload_total, ==, s->bytes->len);
  g_assert_cmpuint (log.seqs->len, ==, 7);
  g_assert_cmpint (log.state_at_last, ==, AIRLOCK_CHANNEL_COMPLETE);
  g_assert_cmpmem (airlock_channel_get_chain_head (channel), 32,
                   ((const AirlockFrame *) frames->pdata[6])->chain, 32);
  assert_raw_equals (channel, s->bytes->data, s->bytes->len);

  airlock_channel_close (channel, T0 + 1);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);

  g_array_unref (log.seqs);
  g_ptr_array_unref (log.frames);
}

static void
test_byte_at_a_time_is_identical (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) whole = channel_from_stream (s, 0);
  g_autoptr (AirlockChannel) bytewise = channel_from_stream (s, 1);

  g_assert_cmpint (airlock_channel_get_state (bytewise), ==, AIRLOCK_CHANNEL_COMPLETE);
  assert_frames_equal (whole, bytewise);
  assert_raw_equals (bytewise, s->bytes->data, s->bytes->len);
}

static void
test_random_chunks_are_identical (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) whole = channel_from_stream (s, 0);

  for (guint round = 0; round < 50; round++)
    {
      g_autoptr (AirlockChannel) channel = test_channel_new ();
      gsize pos = 0;

      while (pos < s->bytes->len)
        {
          /* not inside MIN(), which evaluates its arguments twice */
          gsize n = (gsize) g_test_rand_int_range (0, 40);

          n = MIN (n, s->bytes->len - pos);
          airlock_channel_feed (channel, s->bytes->data + pos, n, T0, REAL0);
          pos += n;
        }
      g_assert_null (airlock_channel_get_reason (channel));
      g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
      assert_frames_equal (whole, channel);
    }
}

static void
test_max_payload_is_accepted (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = NULL;
  g_autofree char *message = g_malloc (AIRLOCK_FRAME_MAX_PAYLOAD - AIRLOCK_TLV_HEADER_SIZE + 1);
  GPtrArray *frames;

  memset (message, 'm', AIRLOCK_FRAME_MAX_PAYLOAD - AIRLOCK_TLV_HEADER_SIZE);
  message[AIRLOCK_FRAME_MAX_PAYLOAD - AIRLOCK_TLV_HEADER_SIZE] = '\0';
  stream_hello (s);
  stream_log (s, message);
  stream_trailer (s);

  channel = channel_from_stream (s, 1000);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  frames = airlock_channel_get_frames (channel);
  g_assert_cmpuint (g_bytes_get_size (((AirlockFrame *) frames->pdata[1])->payload), ==,
                    AIRLOCK_FRAME_MAX_PAYLOAD);
}

static void
test_event_counted (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = NULL;

  stream_hello (s);
  stream_event (s);
  stream_event (s);
  stream_trailer_with (s, 3, 0, 2, AIRLOCK_END_TIMEOUT);

  channel = channel_from_stream (s, 0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  g_assert_cmpuint (airlock_channel_get_trailer (channel)->event_count, ==, 2);
  g_assert_cmpuint (airlock_channel_get_trailer (channel)->end_reason, ==, AIRLOCK_END_TIMEOUT);
}

/* A warped run the host stopped at its wall-time limit ends with its own
 * reason (the verdict judges whether the clock was warped). */
static void
test_wall_limit_end (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = NULL;

  stream_hello (s);
  stream_trailer_with (s, 1, 0, 0, AIRLOCK_END_WALL_LIMIT);

  channel = channel_from_stream (s, 0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  g_assert_cmpuint (airlock_channel_get_trailer (channel)->end_reason, ==, AIRLOCK_END_WALL_LIMIT);
}

/* ---- anomalies, table-driven ---- */

typedef void (*BuildFunc) (Stream *s, GPtrArray *expect);

typedef struct {
  const char *path;
  AirlockAnomaly anomaly;
  BuildFunc build;
} AnomalyCase;

static void
expect_printf (GPtrArray *expect, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
expect_printf (GPtrArray *expect, const char *format, ...)
{
  va_list args;

  va_start (args, format);
  g_ptr_array_add (expect, g_strdup_vprintf (format, args));
  va_end (args);
}

static void
build_first_frame_not_hello (Stream *s, GPtrArray *expect)
{
  stream_heartbeat (s);
  g_ptr_array_add (expect, g_strdup ("heartbeat frame, not a hello"));
  g_ptr_array_add (expect, g_strdup ("at byte 0"));
}

static void
build_first_frame_trailer (Stream *s, GPtrArray *expect)
{
  stream_trailer_with (s, 0, 0, 0, AIRLOCK_END_COMPLETED);
  g_ptr_array_add (expect, g_strdup ("trailer frame, not a hello"));
}

static void
build_hello_not_frame_zero (Stream *s, GPtrArray *expect)
{
  s->seq = 3;
  stream_hello (s);
  g_ptr_array_add (expect, g_strdup ("hello numbered 3"));
  g_ptr_array_add (expect, g_strdup ("must be frame 0"));
}

static void
build_wrong_nonce (Stream *s, GPtrArray *expect)
{
  guint8 nonce[AIRLOCK_NONCE_LEN];

  memcpy (nonce, test_nonce, sizeof nonce);
  nonce[31] ^= 0x01;
  stream_hello_with (s, nonce, EBUSY);
  stream_heartbeat (s);
  g_ptr_array_add (expect, g_strdup ("wrong nonce"));
  /* what it got, and what it expected */
  g_ptr_array_add (expect, g_strdup ("0f1e2d3c4b5a69788796a5b4c3d2e1f1"));
  g_ptr_array_add (expect, g_strdup ("0f1e2d3c4b5a69788796a5b4c3d2e1f0"));
}

static void
build_second_open_succeeded (Stream *s, GPtrArray *expect)
{
  stream_hello_with (s, test_nonce, 0);
  g_ptr_array_add (expect, g_strdup ("succeeded (errno 0)"));
  g_ptr_array_add (expect, g_strdup ("EBUSY"));
}

static void
build_second_open_wrong_errno (Stream *s, GPtrArray *expect)
{
  stream_hello_with (s, test_nonce, EACCES);
  expect_printf (expect, "errno %d, not EBUSY", EACCES);
}

static void
build_bad_magic_first (Stream *s, GPtrArray *expect)
{
  stream_raw (s, "ALKX", 4);
  g_ptr_array_add (expect, g_strdup ("bad magic"));
  g_ptr_array_add (expect, g_strdup ("byte 3 is 0x58"));
}

static void
build_bad_magic_later (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_heartbeat (s);
  expect_printf (expect, "at byte %u, where frame 2 should start", s->bytes->len);
  stream_raw (s, "console: hello\n", 15);
}

static void
build_bad_version (Stream *s, GPtrArray *expect)
{
  gsize at;

  stream_hello (s);
  at = stream_heartbeat (s);
  s->bytes->data[at + 4] = 2;
  expect_printf (expect, "frame 1 at byte %" G_GSIZE_FORMAT " has protocol version 2", at);
}

static void
build_oversize (Stream *s, GPtrArray *expect)
{
  guint8 header[8] = { 'A', 'L', 'K', 'F', AIRLOCK_PROTO_VERSION, AIRLOCK_FRAME_LOG, 0, 0 };
  gsize at;

  stream_hello (s);
  at = s->bytes->len;
  /* Only the first 8 header bytes: the length alone must be enough. */
  wire_le16 (header + 6, AIRLOCK_FRAME_MAX_PAYLOAD + 1);
  stream_raw (s, header, sizeof header);
  expect_printf (expect, "frame 1 at byte %" G_GSIZE_FORMAT " declares a payload of %d bytes",
                 at, AIRLOCK_FRAME_MAX_PAYLOAD + 1);
}

static void
build_unknown_type (Stream *s, GPtrArray *expect)
{
  gsize at;

  stream_hello (s);
  at = stream_heartbeat (s);
  s->bytes->data[at + 5] = 42;
  expect_printf (expect, "frame 1 at byte %" G_GSIZE_FORMAT " has type 42", at);
}

static void
build_unknown_type_first (Stream *s, GPtrArray *expect)
{
  stream_begin (s, 0);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("has type 0"));
}

static void
build_sequence_gap (Stream *s, GPtrArray *expect)
{
  gsize at;

  stream_hello (s);
  stream_heartbeat (s);
  s->seq = 4;
  at = stream_heartbeat (s);
  expect_printf (expect, "sequence gap: expected frame 2, got frame 4 at byte %" G_GSIZE_FORMAT,
                 at);
}

static void
build_sequence_replay (Stream *s, GPtrArray *expect)
{
  gsize at;

  stream_hello (s);
  stream_heartbeat (s);
  s->seq = 1;
  at = stream_heartbeat (s);
  expect_printf (expect, "expected frame 2, got frame 1 again at byte %" G_GSIZE_FORMAT, at);
}

static void
build_sequence_reorder (Stream *s, GPtrArray *expect)
{
  g_autoptr (Stream) later = stream_new ();
  gsize at;

  stream_hello (s);
  /* frames 1 and 2 swapped on the wire */
  later->seq = 2;
  stream_event (later);
  at = s->bytes->len;
  stream_raw (s, later->bytes->data, later->bytes->len);
  stream_heartbeat (s);
  expect_printf (expect, "sequence gap: expected frame 1, got frame 2 at byte %" G_GSIZE_FORMAT,
                 at);
}

static void
build_second_hello (Stream *s, GPtrArray *expect)
{
  gsize at;

  stream_hello (s);
  at = stream_hello (s);
  expect_printf (expect, "frame 1 at byte %" G_GSIZE_FORMAT " is a second hello", at);
}

static void
build_tlv_overrun (Stream *s, GPtrArray *expect)
{
  gsize at;
  guint8 *tlv;

  stream_hello (s);
  at = stream_heartbeat (s);
  /* the uptime TLV claims 9 bytes; 8 are there */
  tlv = s->bytes->data + at + AIRLOCK_FRAME_HEADER_SIZE;
  wire_le16 (tlv + 2, 9);
  expect_printf (expect, "malformed heartbeat frame 1 at byte %" G_GSIZE_FORMAT, at);
  expect_printf (expect, "TLV at byte %" G_GSIZE_FORMAT " runs past the end of the payload",
                 at + AIRLOCK_FRAME_HEADER_SIZE);
  g_ptr_array_add (expect, g_strdup ("declares 9 bytes of value, only 8 are left"));
}

static void
build_partial_tlv_header (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f;

  stream_hello (s);
  f = stream_begin (s, AIRLOCK_FRAME_HEARTBEAT);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  /* three stray bytes: less than a TLV header */
  memcpy (f->bytes + f->len, "\x05\x00\x08", 3);
  f->len += 3;
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("3 bytes left, a TLV header needs 4"));
}

static void
build_heartbeat_without_uptime (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_begin (s, AIRLOCK_FRAME_HEARTBEAT);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed heartbeat frame 1"));
  g_ptr_array_add (expect, g_strdup ("mandatory TLV uptime-ns (tag 5) is missing"));
}

static void
build_hello_without_build_id (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f = stream_begin (s, AIRLOCK_FRAME_HELLO);

  wire_put (f, AIRLOCK_TLV_NONCE, test_nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (f, AIRLOCK_TLV_ARCH, "aarch64");
  wire_put_str (f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0");
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, EBUSY);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed hello frame 0 at byte 0"));
  g_ptr_array_add (expect, g_strdup ("build-id (tag 4) is missing"));
}

static void
build_duplicate_tag (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f;
  gsize at;

  stream_hello (s);
  f = stream_begin (s, AIRLOCK_FRAME_HEARTBEAT);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 2);
  at = stream_end (s);
  expect_printf (expect, "uptime-ns (tag 5) appears twice, again at byte %" G_GSIZE_FORMAT,
                 at + AIRLOCK_FRAME_HEADER_SIZE + 12);
}

static void
build_duplicate_nonce (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f = stream_begin (s, AIRLOCK_FRAME_HELLO);

  /* a second nonce must not be able to hide behind a correct first one */
  put_hello_tlvs (f, test_nonce, EBUSY);
  wire_put (f, AIRLOCK_TLV_NONCE, test_nonce, AIRLOCK_NONCE_LEN);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("nonce (tag 1) appears twice"));
}

static void
build_tag_not_allowed (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f;

  stream_hello (s);
  f = stream_begin (s, AIRLOCK_FRAME_HEARTBEAT);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_str (f, AIRLOCK_TLV_MESSAGE, "hi");
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("tag 12 (message)"));
  g_ptr_array_add (expect, g_strdup ("not allowed in a heartbeat frame"));
}

static void
build_unknown_tag (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f;

  stream_hello (s);
  stream_heartbeat (s);
  f = stream_begin (s, AIRLOCK_FRAME_TRAILER);
  wire_put_u64 (f, AIRLOCK_TLV_FRAME_COUNT, 2);
  wire_put_u64 (f, AIRLOCK_TLV_HEARTBEAT_COUNT, 1);
  wire_put_u64 (f, AIRLOCK_TLV_EVENT_COUNT, 0);
  wire_put_u32 (f, AIRLOCK_TLV_EXIT_STATUS, 0);
  wire_put_u32 (f, AIRLOCK_TLV_END_REASON, 1);
  wire_put_u32 (f, 999, 0);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed trailer frame 2"));
  g_ptr_array_add (expect, g_strdup ("tag 999 (unknown)"));
}

static void
build_integer_wrong_size (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  wire_put_u32 (stream_begin (s, AIRLOCK_FRAME_HEARTBEAT), AIRLOCK_TLV_UPTIME_NS, 1);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("uptime-ns (tag 5)"));
  g_ptr_array_add (expect, g_strdup ("is 4 bytes long, must be exactly 8"));
}

static void
build_nonce_wrong_size (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f = stream_begin (s, AIRLOCK_FRAME_HELLO);

  wire_put (f, AIRLOCK_TLV_NONCE, test_nonce, AIRLOCK_NONCE_LEN - 1);
  wire_put_str (f, AIRLOCK_TLV_ARCH, "x86_64");
  wire_put_str (f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0");
  wire_put (f, AIRLOCK_TLV_BUILD_ID, test_build_id, sizeof test_build_id);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, EBUSY);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("nonce (tag 1) at byte 16 is 31 bytes long"));
}

static void
build_log_without_message (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_begin (s, AIRLOCK_FRAME_LOG);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed log frame 1"));
  g_ptr_array_add (expect, g_strdup ("message (tag 12) is missing"));
}

static void
build_event_tlv_overrun (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f;

  stream_hello (s);
  f = stream_begin (s, AIRLOCK_FRAME_EVENT);
  wire_put_str (f, 100, "abc");
  f->bytes[f->len - 3 - 2] = 200;   /* the TLV's length: 200, 3 bytes present */
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed event frame 1"));
  g_ptr_array_add (expect, g_strdup ("declares 200 bytes of value, only 3 are left"));
}

static void
build_event_empty (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_begin (s, AIRLOCK_FRAME_EVENT);
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed event frame 1"));
  g_ptr_array_add (expect, g_strdup ("mandatory TLV kind (tag 32) is missing"));
}

static void
build_event_spec_tag (Stream *s, GPtrArray *expect)
{
  struct wire_frame *f;

  stream_hello (s);
  f = stream_begin (s, AIRLOCK_FRAME_EVENT);
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_START);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 1);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 1);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  /* host → guest only: a guest frame must not carry it */
  wire_put_str (f, AIRLOCK_SPEC_ARG, "/bin/sh");
  stream_end (s);
  g_ptr_array_add (expect, g_strdup ("malformed event frame 1"));
  g_ptr_array_add (expect, g_strdup ("tag 96 (spec-arg)"));
  g_ptr_array_add (expect, g_strdup ("is not allowed in a event frame"));
}

static void
build_trailer_frame_count (Stream *s, GPtrArray *expect)
{
  gsize at;

  stream_hello (s);
  stream_heartbeat (s);
  stream_event (s);
  at = stream_trailer_with (s, 2, 1, 1, AIRLOCK_END_COMPLETED);
  g_ptr_array_add (expect, g_strdup ("frame-count says 2 frames were sent, expected 3"));
  expect_printf (expect, "in frame 3 at byte %" G_GSIZE_FORMAT, at);
}

static void
build_trailer_heartbeat_count (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_heartbeat (s);
  stream_heartbeat (s);
  stream_trailer_with (s, 3, 3, 0, AIRLOCK_END_COMPLETED);
  g_ptr_array_add (expect, g_strdup ("heartbeat-count says 3 heartbeats were sent, expected 2"));
}

static void
build_trailer_event_count (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_event (s);
  stream_trailer_with (s, 2, 0, 0, AIRLOCK_END_COMPLETED);
  g_ptr_array_add (expect, g_strdup ("event-count says 0 events were sent, expected 1"));
}

static void
build_trailer_end_reason_zero (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_trailer_with (s, 1, 0, 0, 0);
  g_ptr_array_add (expect, g_strdup ("end-reason is 0"));
}

static void
build_trailer_end_reason_five (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_trailer_with (s, 1, 0, 0, 5);
  g_ptr_array_add (expect, g_strdup ("end-reason is 5"));
}

static void
build_after_trailer (Stream *s, GPtrArray *expect)
{
  stream_hello (s);
  stream_trailer (s);
  expect_printf (expect, "more bytes arrived at byte %u, after trailer frame 1", s->bytes->len);
  stream_heartbeat (s);
}

static const AnomalyCase anomaly_cases[] = {
  { "/evidence/channel/first-frame-not-hello-is-inconclusive", AIRLOCK_ANOMALY_NO_HELLO,
    build_first_frame_not_hello },
  { "/evidence/channel/first-frame-trailer-is-inconclusive", AIRLOCK_ANOMALY_NO_HELLO,
    build_first_frame_trailer },
  { "/evidence/channel/hello-not-frame-zero-is-inconclusive", AIRLOCK_ANOMALY_NO_HELLO,
    build_hello_not_frame_zero },
  { "/evidence/channel/wrong-nonce-is-inconclusive", AIRLOCK_ANOMALY_WRONG_NONCE,
    build_wrong_nonce },
  { "/evidence/channel/second-open-succeeded-is-inconclusive", AIRLOCK_ANOMALY_NOT_EXCLUSIVE,
    build_second_open_succeeded },
  { "/evidence/channel/second-open-wrong-errno-is-inconclusive", AIRLOCK_ANOMALY_NOT_EXCLUSIVE,
    build_second_open_wrong_errno },
  { "/evidence/channel/bad-magic-is-inconclusive", AIRLOCK_ANOMALY_BAD_MAGIC,
    build_bad_magic_first },
  { "/evidence/channel/bad-magic-mid-stream-is-inconclusive", AIRLOCK_ANOMALY_BAD_MAGIC,
    build_bad_magic_later },
  { "/evidence/channel/bad-version-is-inconclusive", AIRLOCK_ANOMALY_BAD_VERSION,
    build_bad_version },
  { "/evidence/channel/oversize-is-inconclusive-from-header", AIRLOCK_ANOMALY_OVERSIZE,
    build_oversize },
  { "/evidence/channel/unknown-type-is-inconclusive", AIRLOCK_ANOMALY_UNKNOWN_TYPE,
    build_unknown_type },
  { "/evidence/channel/unknown-type-first-is-inconclusive", AIRLOCK_ANOMALY_UNKNOWN_TYPE,
    build_unknown_type_first },
  { "/evidence/channel/sequence-gap-is-inconclusive", AIRLOCK_ANOMALY_SEQUENCE,
    build_sequence_gap },
  { "/evidence/channel/sequence-replay-is-inconclusive", AIRLOCK_ANOMALY_SEQUENCE,
    build_sequence_replay },
  { "/evidence/channel/sequence-reorder-is-inconclusive", AIRLOCK_ANOMALY_SEQUENCE,
    build_sequence_reorder },
  { "/evidence/channel/second-hello-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_second_hello },
  { "/evidence/channel/malformed/tlv-overrun-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_tlv_overrun },
  { "/evidence/channel/malformed/partial-tlv-header-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_partial_tlv_header },
  { "/evidence/channel/malformed/heartbeat-without-uptime-is-inconclusive",
    AIRLOCK_ANOMALY_MALFORMED, build_heartbeat_without_uptime },
  { "/evidence/channel/malformed/hello-without-build-id-is-inconclusive",
    AIRLOCK_ANOMALY_MALFORMED, build_hello_without_build_id },
  { "/evidence/channel/malformed/duplicate-tag-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_duplicate_tag },
  { "/evidence/channel/malformed/duplicate-nonce-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_duplicate_nonce },
  { "/evidence/channel/malformed/tag-not-allowed-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_tag_not_allowed },
  { "/evidence/channel/malformed/unknown-tag-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_unknown_tag },
  { "/evidence/channel/malformed/integer-wrong-size-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_integer_wrong_size },
  { "/evidence/channel/malformed/nonce-wrong-size-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_nonce_wrong_size },
  { "/evidence/channel/malformed/log-without-message-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_log_without_message },
  { "/evidence/channel/malformed/event-tlv-overrun-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_event_tlv_overrun },
  { "/evidence/channel/malformed/event-without-kind-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_event_empty },
  { "/evidence/channel/malformed/event-spec-tag-is-inconclusive", AIRLOCK_ANOMALY_MALFORMED,
    build_event_spec_tag },
  { "/evidence/channel/trailer-frame-count-mismatch-is-inconclusive",
    AIRLOCK_ANOMALY_TRAILER_MISMATCH, build_trailer_frame_count },
  { "/evidence/channel/trailer-heartbeat-count-mismatch-is-inconclusive",
    AIRLOCK_ANOMALY_TRAILER_MISMATCH, build_trailer_heartbeat_count },
  { "/evidence/channel/trailer-event-count-mismatch-is-inconclusive",
    AIRLOCK_ANOMALY_TRAILER_MISMATCH, build_trailer_event_count },
  { "/evidence/channel/trailer-end-reason-zero-is-inconclusive",
    AIRLOCK_ANOMALY_TRAILER_MISMATCH, build_trailer_end_reason_zero },
  { "/evidence/channel/trailer-end-reason-five-is-inconclusive",
    AIRLOCK_ANOMALY_TRAILER_MISMATCH, build_trailer_end_reason_five },
  { "/evidence/channel/after-trailer-same-read-is-inconclusive", AIRLOCK_ANOMALY_AFTER_TRAILER,
    build_after_trailer },
};

static void
test_anomaly (gconstpointer data)
{
  const AnomalyCase *c = data;
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (GPtrArray) expect = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (AirlockChannel) whole = NULL;
  g_autoptr (AirlockChannel) bytewise = NULL;

  c->build (s, expect);
  g_assert_cmpuint (expect->len, >, 0);

  whole = channel_from_stream (s, 0);
  bytewise = channel_from_stream (s, 1);

  assert_inconclusive (whole, c->anomaly);
  for (guint i = 0; i < expect->len; i++)
    assert_reason_contains (whole, expect->pdata[i]);

  /* one read or one byte per read: the same verdict, the same words */
  assert_inconclusive (bytewise, c->anomaly);
  g_assert_cmpstr (airlock_channel_get_reason (whole), ==, airlock_channel_get_reason (bytewise));
  assert_frames_equal (whole, bytewise);

  /* every byte kept, including the offending ones */
  assert_raw_equals (whole, s->bytes->data, s->bytes->len);
  assert_raw_equals (bytewise, s->bytes->data, s->bytes->len);

  /* nothing after the anomaly is decoded or changes the verdict */
  airlock_channel_close (whole, T0 + 1);
  airlock_channel_check_time (whole, G_MAXINT64);
  assert_inconclusive (whole, c->anomaly);
  for (guint i = 0; i < expect->len; i++)
    assert_reason_contains (whole, expect->pdata[i]);
}

/* ---- anomalies that need time or close ---- */

static AirlockChannel *
open_channel (Stream *s, gint64 mono)
{
  AirlockChannel *channel = test_channel_new ();

  stream_hello (s);
  feed_chunked (channel, s->bytes->data, s->bytes->len, 0, mono);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_OPEN);
  return channel;
}

/* Feeds the frames @s gained since @from, at @mono. */
static void
feed_since (AirlockChannel *channel, Stream *s, gsize from, gint64 mono)
{
  feed_chunked (channel, s->bytes->data + from, s->bytes->len - from, 0, mono);
}

static void
test_close_before_hello (void)
{
  g_autoptr (AirlockChannel) channel = test_channel_new ();

  airlock_channel_close (channel, T0);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_NO_HELLO);
  assert_reason_contains (channel, "closed before any hello");
  g_assert_null (airlock_channel_get_hello (channel));
}

static void
test_close_inside_hello (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();

  stream_hello (s);
  feed_chunked (channel, s->bytes->data, 20, 0, T0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_AWAITING_HELLO);
  airlock_channel_close (channel, T0);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_NO_HELLO);
  assert_reason_contains (channel, "partial frame of 20 bytes at byte 0");
  assert_raw_equals (channel, s->bytes->data, 20);
}

static void
test_closed_early (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);
  gsize from = s->bytes->len;

  stream_heartbeat (s);
  feed_since (channel, s, from, T0 + 1000);
  airlock_channel_close (channel, T0 + 2000);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_CLOSED_EARLY);
  assert_reason_contains (channel, "after frame 1");
  assert_reason_contains (channel, "before any trailer");
}

static void
test_closed_mid_frame (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);
  gsize from = s->bytes->len;

  stream_heartbeat (s);
  feed_chunked (channel, s->bytes->data + from, 5, 0, T0 + 1000);
  airlock_channel_close (channel, T0 + 2000);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_CLOSED_EARLY);
  {
    g_autofree char *needle = g_strdup_printf ("partial frame of 5 bytes at byte %"
                                               G_GSIZE_FORMAT, from);

    assert_reason_contains (channel, needle);
  }
}

static void
test_heartbeat_gap_on_check_time (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);

  /* exactly the tolerance is still in time */
  airlock_channel_check_time (channel, T0 + TOLERANCE_MS * 1000);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_OPEN);
  airlock_channel_check_time (channel, T0 + TOLERANCE_MS * 1000 + 1001);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP);
  assert_reason_contains (channel, "no heartbeat for 3001 ms since the hello");
  assert_reason_contains (channel, "tolerance is 3000 ms");
}

static void
test_heartbeat_gap_on_late_feed (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);
  gsize from = s->bytes->len;

  stream_heartbeat (s);
  feed_since (channel, s, from, T0 + 3500 * 1000);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP);
  assert_reason_contains (channel, "3500 ms");
  /* the late heartbeat was not accepted, but its bytes were kept */
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 1);
  g_assert_cmpuint (airlock_channel_get_heartbeat_count (channel), ==, 0);
  assert_raw_equals (channel, s->bytes->data, s->bytes->len);
}

static void
test_heartbeat_resets_deadline (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);
  gsize from = s->bytes->len;

  stream_heartbeat (s);
  feed_since (channel, s, from, T0 + 2500 * 1000);
  airlock_channel_check_time (channel, T0 + 5500 * 1000);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_OPEN);
  airlock_channel_check_time (channel, T0 + 5600 * 1000);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP);
  assert_reason_contains (channel, "since heartbeat frame 1");
}

static void
test_events_do_not_reset_deadline (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);
  gsize from = s->bytes->len;

  stream_event (s);
  stream_log (s, "busy");
  feed_since (channel, s, from, T0 + 2900 * 1000);
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 3);
  airlock_channel_check_time (channel, T0 + 3100 * 1000);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP);
}

static void
test_gap_before_close_is_reported (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = open_channel (s, T0);

  airlock_channel_close (channel, T0 + 10 * 1000 * 1000);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_HEARTBEAT_GAP);
}

static void
test_no_gap_check_before_hello_or_after_complete (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();

  /* waiting for the hello is the caller's boot timeout, not a gap */
  airlock_channel_check_time (channel, T0 + 60 * G_USEC_PER_SEC);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_AWAITING_HELLO);
  feed_chunked (channel, s->bytes->data, s->bytes->len, 0, T0 + 60 * G_USEC_PER_SEC);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  airlock_channel_check_time (channel, T0 + 600 * G_USEC_PER_SEC);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
}

/* An empty read before any byte: the stream is not mapped yet.  Under
 * clang's UBSan (the fuzz build) the decoder once stopped here at
 * NULL + 0, which is undefined; the channel must simply wait. */
static void
test_empty_first_read (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();

  airlock_channel_feed (channel, NULL, 0, T0, REAL0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_AWAITING_HELLO);
  g_assert_cmpuint (g_bytes_get_size (airlock_channel_get_raw (channel)), ==, 0);
  feed_chunked (channel, s->bytes->data, s->bytes->len, 0, T0);
  airlock_channel_feed (channel, NULL, 0, T0, REAL0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  assert_raw_equals (channel, s->bytes->data, s->bytes->len);
}

static void
test_after_trailer_later_read (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = channel_from_stream (s, 0);
  g_autofree char *needle = NULL;

  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  /* an empty read changes nothing */
  airlock_channel_feed (channel, NULL, 0, T0, REAL0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);

  needle = g_strdup_printf ("more bytes arrived at byte %u, after trailer frame 6",
                            s->bytes->len);
  stream_raw (s, "\0", 1);
  airlock_channel_feed (channel, (const guint8 *) "\0", 1, T0, REAL0);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_AFTER_TRAILER);
  assert_reason_contains (channel, needle);
  assert_raw_equals (channel, s->bytes->data, s->bytes->len);
  /* the trailer itself was accepted and stays visible */
  g_assert_nonnull (airlock_channel_get_trailer (channel));
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 7);
}

static void
test_raw_kept_after_anomaly (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();
  g_autoptr (GByteArray) fed = g_byte_array_new ();
  gsize hello_end;

  stream_hello (s);
  hello_end = s->bytes->len;
  stream_raw (s, "garbage", 7);
  stream_heartbeat (s);

  feed_chunked (channel, s->bytes->data, hello_end + 3, 0, T0);
  feed_chunked (channel, s->bytes->data + hello_end + 3, s->bytes->len - hello_end - 3, 2, T0);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_BAD_MAGIC);
  assert_raw_equals (channel, s->bytes->data, s->bytes->len);
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 1);

  /* and keeps growing after the verdict */
  g_byte_array_append (fed, s->bytes->data, s->bytes->len);
  g_byte_array_append (fed, (const guint8 *) "more", 4);
  airlock_channel_feed (channel, (const guint8 *) "more", 4, T0 + 1, REAL0);
  assert_raw_equals (channel, fed->data, fed->len);
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 1);
}

/* ---- fail() and close() on final states ---- */

static void
test_fail_after_complete_does_nothing (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = channel_from_stream (s, 0);

  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  airlock_channel_fail (channel, AIRLOCK_ANOMALY_EXTERNAL, "the VM died");
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  g_assert_cmpint (airlock_channel_get_anomaly (channel), ==, AIRLOCK_ANOMALY_NONE);
  g_assert_null (airlock_channel_get_reason (channel));
}

static void
test_fail_sets_external (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) waiting = test_channel_new ();
  g_autoptr (AirlockChannel) open = open_channel (s, T0);

  airlock_channel_fail (waiting, AIRLOCK_ANOMALY_EXTERNAL, "boot timed out after 30 s");
  assert_inconclusive (waiting, AIRLOCK_ANOMALY_EXTERNAL);
  g_assert_cmpstr (airlock_channel_get_reason (waiting), ==, "boot timed out after 30 s");

  airlock_channel_fail (open, AIRLOCK_ANOMALY_EXTERNAL, "the VM died");
  assert_inconclusive (open, AIRLOCK_ANOMALY_EXTERNAL);
  g_assert_cmpstr (airlock_channel_get_reason (open), ==, "the VM died");

  /* and a later trailer cannot undo it */
  stream_trailer (s);
  feed_chunked (open, s->bytes->data, s->bytes->len, 0, T0);
  assert_inconclusive (open, AIRLOCK_ANOMALY_EXTERNAL);
  g_assert_cmpuint (airlock_channel_get_frames (open)->len, ==, 1);
}

static void
test_fail_after_anomaly_keeps_first (void)
{
  g_autoptr (AirlockChannel) channel = test_channel_new ();

  airlock_channel_feed (channel, (const guint8 *) "X", 1, T0, REAL0);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_BAD_MAGIC);
  airlock_channel_fail (channel, AIRLOCK_ANOMALY_EXTERNAL, "the VM died");
  assert_inconclusive (channel, AIRLOCK_ANOMALY_BAD_MAGIC);
  assert_reason_contains (channel, "bad magic");
}

static void
fail_on_frame_one (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  guint *calls = user_data;

  (*calls)++;
  if (frame->seq == 1)
    airlock_channel_fail (channel, AIRLOCK_ANOMALY_EXTERNAL, "caller gave up");
}

static void
test_frame_func_can_fail_the_run (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();
  guint calls = 0;

  airlock_channel_set_frame_func (channel, fail_on_frame_one, &calls);
  feed_chunked (channel, s->bytes->data, s->bytes->len, 0, T0);
  assert_inconclusive (channel, AIRLOCK_ANOMALY_EXTERNAL);
  g_assert_cmpuint (calls, ==, 2);
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 2);
  assert_raw_equals (channel, s->bytes->data, s->bytes->len);
}

/* ---- hostile strings ---- */

static void
assert_safe_text (const char *text)
{
  g_assert_true (g_utf8_validate (text, -1, NULL));
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    g_assert_false (g_unichar_iscntrl (g_utf8_get_char (p)));
}

static void
test_hostile_strings_are_escaped (void)
{
  static const char arch[] = "x86_64\0\x1b[31mred\xff";
  static const char release[] = "6.1\xe2\x80\xae" "evil\\";
  static const char message[] = "line\nnext\t\x7f\xc3\xa9\xc2\x85\xe2\x80";
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = NULL;
  struct wire_frame *f = stream_begin (s, AIRLOCK_FRAME_HELLO);
  const AirlockGuestHello *hello;
  GPtrArray *log;

  wire_put (f, AIRLOCK_TLV_NONCE, test_nonce, AIRLOCK_NONCE_LEN);
  wire_put (f, AIRLOCK_TLV_ARCH, arch, sizeof arch - 1);
  wire_put (f, AIRLOCK_TLV_KERNEL_RELEASE, release, sizeof release - 1);
  wire_put (f, AIRLOCK_TLV_BUILD_ID, "", 0);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, EBUSY);
  stream_end (s);
  wire_put (stream_begin (s, AIRLOCK_FRAME_LOG), AIRLOCK_TLV_MESSAGE, message,
            sizeof message - 1);
  stream_end (s);
  stream_trailer (s);

  channel = channel_from_stream (s, 0);
  g_assert_cmpint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_COMPLETE);
  hello = airlock_channel_get_hello (channel);
  g_assert_cmpstr (hello->arch, ==, "x86_64\\x00\\x1b[31mred\\xff");
  g_assert_cmpstr (hello->kernel_release, ==, "6.1\\u{202e}evil\\\\");
  g_assert_cmpstr (hello->build_id_hex, ==, "");
  log = airlock_channel_get_log (channel);
  g_assert_cmpuint (log->len, ==, 1);
  g_assert_cmpstr (log->pdata[0], ==, "line\\nnext\\t\\x7f\xc3\xa9\\u{0085}\\xe2\\x80");
  assert_safe_text (hello->arch);
  assert_safe_text (hello->kernel_release);
  assert_safe_text (log->pdata[0]);
}

/* ---- nonce, host hello ---- */

static void
test_host_hello_layout (void)
{
  g_autoptr (AirlockChannel) channel = test_channel_new ();
  const guint8 *hello;
  gsize len = 0;

  hello = airlock_channel_get_host_hello (channel, &len);
  g_assert_cmpuint (len, ==, AIRLOCK_HOST_HELLO_SIZE);
  g_assert_cmpmem (hello, 4, "ALKH", 4);
  g_assert_cmpuint (hello[4], ==, AIRLOCK_PROTO_VERSION);
  g_assert_cmpuint (hello[5], ==, 0);
  g_assert_cmpuint (wire_get_le32 (hello + 8), ==, HEARTBEAT_MS);
  g_assert_cmpmem (hello + 16, AIRLOCK_NONCE_LEN, test_nonce, AIRLOCK_NONCE_LEN);
  g_assert_cmpmem (airlock_channel_get_nonce (channel), AIRLOCK_NONCE_LEN,
                   test_nonce, AIRLOCK_NONCE_LEN);
}

static void
test_new_random_uses_fresh_nonces (void)
{
  g_autoptr (AirlockChannel) a = airlock_channel_new_random (HEARTBEAT_MS, TOLERANCE_MS);
  g_autoptr (AirlockChannel) b = airlock_channel_new_random (HEARTBEAT_MS, TOLERANCE_MS);
  static const guint8 zero[AIRLOCK_NONCE_LEN] = { 0 };
  const guint8 *hello;

  g_assert_true (memcmp (airlock_channel_get_nonce (a), airlock_channel_get_nonce (b),
                         AIRLOCK_NONCE_LEN) != 0);
  g_assert_true (memcmp (airlock_channel_get_nonce (a), zero, AIRLOCK_NONCE_LEN) != 0);
  hello = airlock_channel_get_host_hello (a, NULL);
  g_assert_cmpmem (hello + 16, AIRLOCK_NONCE_LEN, airlock_channel_get_nonce (a),
                   AIRLOCK_NONCE_LEN);
  g_assert_cmpint (airlock_channel_get_state (a), ==, AIRLOCK_CHANNEL_AWAITING_HELLO);
}

/* ---- the chain ---- */

static void
sha256 (const guint8 *a, gsize a_len, const guint8 *b, gsize b_len, guint8 out[32])
{
  g_autoptr (GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  gsize len = 32;

  g_checksum_update (checksum, a, (gssize) a_len);
  g_checksum_update (checksum, b, (gssize) b_len);
  g_checksum_get_digest (checksum, out, &len);
  g_assert_cmpuint (len, ==, 32);
}

static void
test_chain_matches_independent_sha256 (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) channel = channel_from_stream (s, 0);
  g_autoptr (AirlockChannel) empty = test_channel_new ();
  guint8 host_hello[AIRLOCK_HOST_HELLO_SIZE];
  guint8 h[32];
  GPtrArray *frames = airlock_channel_get_frames (channel);

  /* h0 from our own copy of the host hello, not the channel's */
  wire_host_hello (host_hello, HEARTBEAT_MS, test_nonce);
  sha256 ((const guint8 *) "airlock-chain-v1", 16, host_hello, sizeof host_hello, h);
  g_assert_cmpmem (airlock_channel_get_chain_head (empty), 32, h, 32);

  g_assert_cmpuint (frames->len, ==, s->offsets->len);
  for (guint i = 0; i < s->offsets->len; i++)
    {
      gsize start = g_array_index (s->offsets, gsize, i);
      gsize end = i + 1 < s->offsets->len ? g_array_index (s->offsets, gsize, i + 1)
                                          : s->bytes->len;
      guint8 next[32];

      sha256 (h, 32, s->bytes->data + start, end - start, next);
      memcpy (h, next, 32);
      g_assert_cmpmem (((const AirlockFrame *) frames->pdata[i])->chain, 32, h, 32);
    }
  g_assert_cmpmem (airlock_channel_get_chain_head (channel), 32, h, 32);
}

/* Flips each bit of interest in every byte of a valid stream: either the
 * channel notices (not COMPLETE) or the chain head differs.  No byte of a
 * frame can change without one of the two. */
static void
test_chain_any_byte_change_is_detected (void)
{
  g_autoptr (Stream) s = valid_stream ();
  g_autoptr (AirlockChannel) reference = channel_from_stream (s, 0);
  static const guint8 flips[] = { 0x01, 0x80, 0xff };
  guint complete_with_new_head = 0;

  g_assert_cmpint (airlock_channel_get_state (reference), ==, AIRLOCK_CHANNEL_COMPLETE);
  for (gsize i = 0; i < s->bytes->len; i++)
    for (gsize j = 0; j < G_N_ELEMENTS (flips); j++)
      {
        g_autoptr (GByteArray) copy = g_byte_array_sized_new (s->bytes->len);
        g_autoptr (AirlockChannel) channel = test_channel_new ();

        g_byte_array_append (copy, s->bytes->data, s->bytes->len);
        copy->data[i] ^= flips[j];
        feed_chunked (channel, copy->data, copy->len, 0, T0);
        airlock_channel_close (channel, T0);
        if (airlock_channel_get_state (channel) != AIRLOCK_CHANNEL_COMPLETE)
          continue;
        if (memcmp (airlock_channel_get_chain_head (channel),
                    airlock_channel_get_chain_head (reference), 32) == 0)
          g_error ("flipping byte %" G_GSIZE_FORMAT " with 0x%02x left the chain head unchanged",
                   i, flips[j]);
        complete_with_new_head++;
      }
  /* the test must have reached the chain, not only the decoder's checks
   * (log text, uptimes, exit status, event values are free to change) */
  g_assert_cmpuint (complete_with_new_head, >, 50);
}

static void
test_chain_depends_on_nonce (void)
{
  static const guint8 other_nonce[AIRLOCK_NONCE_LEN] = { 1 };
  g_autoptr (AirlockChannel) a = test_channel_new ();
  g_autoptr (AirlockChannel) b = airlock_channel_new (other_nonce, HEARTBEAT_MS, TOLERANCE_MS);
  g_autoptr (AirlockChannel) c = airlock_channel_new (test_nonce, HEARTBEAT_MS + 1, TOLERANCE_MS);

  g_assert_true (memcmp (airlock_channel_get_chain_head (a),
                         airlock_channel_get_chain_head (b), 32) != 0);
  /* the whole host hello seeds it, heartbeat period included */
  g_assert_true (memcmp (airlock_channel_get_chain_head (a),
                         airlock_channel_get_chain_head (c), 32) != 0);
}

/* ---- frame-private ---- */

static void
test_header_prefixes (void)
{
  g_autoptr (Stream) s = stream_new ();
  AirlockFrameHeader header = { 0 };
  guint bad = 0;

  stream_hello (s);
  for (gsize len = 0; len < AIRLOCK_FRAME_HEADER_SIZE; len++)
    {
      /* exactly @len bytes allocated, so a read past them is caught under
       * ASan or valgrind */
      g_autofree guint8 *prefix = g_memdup2 (s->bytes->data, len);

      g_assert_cmpint (airlock_frame_parse_header (prefix, len, &header, &bad), ==,
                       AIRLOCK_HEADER_INCOMPLETE);
    }
  g_assert_cmpint (airlock_frame_parse_header (s->bytes->data, AIRLOCK_FRAME_HEADER_SIZE,
                                               &header, &bad), ==, AIRLOCK_HEADER_COMPLETE);
  g_assert_cmpuint (header.type, ==, AIRLOCK_FRAME_HELLO);
  g_assert_cmpuint (header.seq, ==, 0);
  g_assert_cmpuint (header.length, ==, s->bytes->len - AIRLOCK_FRAME_HEADER_SIZE);
}

static void
test_header_errors_are_early (void)
{
  guint8 h[AIRLOCK_FRAME_HEADER_SIZE] = { 'A', 'L', 'K', 'F', AIRLOCK_PROTO_VERSION,
                                          AIRLOCK_FRAME_LOG, 0, 0 };
  guint bad = 0;

  g_assert_cmpint (airlock_frame_parse_header ((const guint8 *) "B", 1, NULL, &bad), ==,
                   AIRLOCK_HEADER_BAD_MAGIC);
  g_assert_cmpuint (bad, ==, 0);
  g_assert_cmpint (airlock_frame_parse_header ((const guint8 *) "ALK!", 4, NULL, &bad), ==,
                   AIRLOCK_HEADER_BAD_MAGIC);
  g_assert_cmpuint (bad, ==, 3);

  h[4] = 9;
  g_assert_cmpint (airlock_frame_parse_header (h, 5, NULL, &bad), ==, AIRLOCK_HEADER_BAD_VERSION);
  g_assert_cmpuint (bad, ==, 9);
  h[4] = AIRLOCK_PROTO_VERSION;

  h[5] = 6;
  g_assert_cmpint (airlock_frame_parse_header (h, 6, NULL, &bad), ==,
                   AIRLOCK_HEADER_UNKNOWN_TYPE);
  h[5] = AIRLOCK_FRAME_LOG;

  wire_le16 (h + 6, 0xffff);
  g_assert_cmpint (airlock_frame_parse_header (h, 8, NULL, &bad), ==, AIRLOCK_HEADER_OVERSIZE);
  g_assert_cmpuint (bad, ==, 0xffff);
  wire_le16 (h + 6, AIRLOCK_FRAME_MAX_PAYLOAD);
  g_assert_cmpint (airlock_frame_parse_header (h, 8, NULL, &bad), ==, AIRLOCK_HEADER_INCOMPLETE);
  g_assert_cmpint (airlock_frame_parse_header (h, 16, NULL, &bad), ==, AIRLOCK_HEADER_COMPLETE);
}

static void
test_tlv_iter_bounds (void)
{
  static const guint8 ok[] = { 1, 0, 2, 0, 'h', 'i', 2, 0, 0, 0 };
  static const guint8 short_header[] = { 1, 0, 2 };
  static const guint8 long_value[] = { 1, 0, 3, 0, 'h', 'i' };
  AirlockTlvIter iter;
  AirlockTlv tlv;

  airlock_tlv_iter_init (&iter, ok, sizeof ok);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_ITEM);
  g_assert_cmpuint (tlv.tag, ==, 1);
  g_assert_cmpmem (tlv.value, tlv.len, "hi", 2);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_ITEM);
  g_assert_cmpuint (tlv.tag, ==, 2);
  g_assert_cmpuint (tlv.len, ==, 0);
  g_assert_cmpuint (tlv.offset, ==, 6);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_END);

  airlock_tlv_iter_init (&iter, NULL, 0);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_END);

  airlock_tlv_iter_init (&iter, short_header, sizeof short_header);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_TRUNCATED);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_TRUNCATED);

  airlock_tlv_iter_init (&iter, long_value, sizeof long_value);
  g_assert_cmpint (airlock_tlv_iter_next (&iter, &tlv), ==, AIRLOCK_TLV_ITER_TRUNCATED);
}

static void
test_anomaly_names_are_distinct (void)
{
  g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  for (int a = AIRLOCK_ANOMALY_NONE; a <= AIRLOCK_ANOMALY_BOUND; a++)
    {
      const char *name = airlock_anomaly_to_string ((AirlockAnomaly) a);

      g_assert_nonnull (name);
      g_assert_cmpstr (name, !=, "invalid");
      g_assert_false (g_hash_table_contains (seen, name));
      g_hash_table_add (seen, (gpointer) name);
    }
  g_assert_cmpstr (airlock_anomaly_to_string (AIRLOCK_ANOMALY_SEQUENCE), ==, "sequence");
  g_assert_cmpstr (airlock_anomaly_to_string (AIRLOCK_ANOMALY_HEARTBEAT_GAP), ==,
                   "heartbeat-gap");
}

/* ---- bounds (lib/bounds-private.h) ---- */

/* A stream fed past AIRLOCK_BOUND_EVIDENCE_STREAM keeps exactly the bound's
 * bytes and ends inconclusive with an anomaly naming the bound; a replay
 * of the kept bytes (what evidence.bin holds, what verify feeds) ends the
 * same way, with the same frames. */
static void
test_stream_bound_is_inconclusive (void)
{
  g_autoptr (Stream) s = stream_new ();
  g_autofree char *message = g_strnfill (8000, 'x');
  g_autoptr (AirlockChannel) live = NULL;
  g_autoptr (AirlockChannel) replay = NULL;
  g_autoptr (GBytes) kept = NULL;
  g_autofree char *live_reason = NULL;
  guint live_frames;
  gsize hello_size, log_size;

  stream_hello (s);
  while (s->bytes->len < AIRLOCK_BOUND_EVIDENCE_STREAM + 100000)
    stream_log (s, message);

  live = test_channel_new ();
  feed_chunked (live, s->bytes->data, s->bytes->len, 65536, 1000);
  assert_inconclusive (live, AIRLOCK_ANOMALY_BOUND);
  assert_reason_contains (live, "evidence stream reached its bound of 67108864 bytes");
  g_assert_cmpstr (airlock_anomaly_to_string (AIRLOCK_ANOMALY_BOUND), ==, "bound");
  kept = g_bytes_ref (airlock_channel_get_raw (live));
  g_assert_cmpuint (g_bytes_get_size (kept), ==, AIRLOCK_BOUND_EVIDENCE_STREAM);
  g_assert_true (memcmp (g_bytes_get_data (kept, NULL), s->bytes->data,
                         AIRLOCK_BOUND_EVIDENCE_STREAM) == 0);
  /* frames that ended before the bound were accepted: the evidence up to
   * it is kept and judged */
  hello_size = g_array_index (s->offsets, gsize, 1);
  log_size = g_array_index (s->offsets, gsize, 2) - hello_size;
  live_frames = airlock_channel_get_frames (live)->len;
  g_assert_cmpuint (live_frames, ==, 1 + (AIRLOCK_BOUND_EVIDENCE_STREAM - hello_size) / log_size);
  live_reason = g_strdup (airlock_channel_get_reason (live));
  g_clear_pointer (&live, airlock_channel_free);

  /* more bytes after the bound change nothing and are not kept */
  replay = test_channel_new ();
  feed_chunked (replay, g_bytes_get_data (kept, NULL), g_bytes_get_size (kept), 4096, 1000);
  airlock_channel_feed (replay, (const guint8 *) "ALKF", 4, 1000, 1000);
  assert_inconclusive (replay, AIRLOCK_ANOMALY_BOUND);
  g_assert_cmpstr (airlock_channel_get_reason (replay), ==, live_reason);
  g_assert_cmpuint (airlock_channel_get_frames (replay)->len, ==, live_frames);
  g_assert_cmpuint (g_bytes_get_size (airlock_channel_get_raw (replay)), ==,
                    AIRLOCK_BOUND_EVIDENCE_STREAM);
}

/* verify reads a derived file only up to AIRLOCK_BOUND_DERIVED_FILE, which
 * is AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE times the stream bound: so the
 * worst a stream can become in frames.jsonl and events.jsonl must stay
 * within that factor, or a run at the stream bound writes a bundle verify
 * refuses.  Measured on the worst shapes known: the smallest frames with
 * the widest numbers, and events whose guest bytes all need escaping. */
static double
frames_jsonl_ratio (void)
{
  AirlockFrame frame = { 0 };
  g_autoptr (GPtrArray) frames = g_ptr_array_new ();
  g_autofree char *text = NULL;

  /* Numbers as wide as a run at the bound can make them; a frame is never
   * shorter than its header. */
  frame.seq = AIRLOCK_BOUND_EVIDENCE_STREAM;
  frame.type = AIRLOCK_FRAME_HEARTBEAT;
  frame.offset = AIRLOCK_BOUND_EVIDENCE_STREAM;
  frame.size = AIRLOCK_FRAME_HEADER_SIZE;
  frame.received_mono_us = G_MININT64;
  frame.received_real_us = G_MININT64;
  memset (frame.chain, 0xab, sizeof frame.chain);
  g_ptr_array_add (frames, &frame);
  text = airlock_bundle_frames_jsonl (frames);
  return (double) strlen (text) / AIRLOCK_FRAME_HEADER_SIZE;
}

/* events.jsonl bytes per stream byte of one EVENT frame built by @build. */
static double
events_jsonl_ratio (void (*build) (struct wire_frame *f))
{
  g_autoptr (Stream) s = stream_new ();
  g_autoptr (AirlockChannel) channel = test_channel_new ();
  g_autoptr (GError) error = NULL;
  AirlockEventLog *log = airlock_event_log_new ();
  g_autofree char *text = NULL;
  const AirlockFrame *frame;
  double ratio;

  stream_hello (s);
  build (stream_begin (s, AIRLOCK_FRAME_EVENT));
  stream_end (s);
  feed_chunked (channel, s->bytes->data, s->bytes->len, 0, 1000);
  g_assert_cmpuint (airlock_channel_get_frames (channel)->len, ==, 2);
  frame = airlock_channel_get_frames (channel)->pdata[1];
  g_assert_true (airlock_event_log_add_frame (log, frame, &error));
  g_assert_no_error (error);
  text = airlock_bundle_events_jsonl (AIRLOCK_ARCH_AMD64, airlock_event_log_get_events (log));
  ratio = (double) strlen (text) / frame->size;
  airlock_event_log_free (log);
  return ratio;
}

static void
put_syscall_head (struct wire_frame *f, guint32 nr)
{
  guint8 args[48];

  memset (args, 0xff, sizeof args);
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, G_MAXUINT64);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
  wire_put_u32 (f, AIRLOCK_TLV_EV_SYSCALL, nr);
  wire_put_u32 (f, AIRLOCK_TLV_EV_AUDIT_ARCH, 0xc000003e); /* AUDIT_ARCH_X86_64 */
  wire_put (f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, G_MAXUINT32);
  wire_put_u32 (f, AIRLOCK_TLV_EV_TID, G_MAXUINT32);
}

/* The smallest syscall event: fixed JSON around few bytes. */
static void
build_minimal_event (struct wire_frame *f)
{
  put_syscall_head (f, 42);
}

/* An execve whose exe, argv, exec argv and path are bytes that all need
 * escaping, as one argument each and as many one-byte arguments. */
static void
build_escaped_execve (struct wire_frame *f)
{
  guint8 one_arg[2000], many_args[2000];

  memset (one_arg, 0x01, sizeof one_arg);
  for (gsize i = 0; i < sizeof many_args; i++)
    many_args[i] = i % 2 == 0 ? 0x01 : 0;
  put_syscall_head (f, 59);
  wire_put (f, AIRLOCK_TLV_EV_EXE, one_arg, 1000);
  wire_put (f, AIRLOCK_TLV_EV_ARGV, many_args, sizeof many_args);
  wire_put (f, AIRLOCK_TLV_EV_EXEC_ARGV, many_args, sizeof many_args);
  wire_put (f, AIRLOCK_TLV_EV_PATH, one_arg, 1000);
}

static void
test_derived_bound_holds_a_maximal_run (void)
{
  double frames = frames_jsonl_ratio ();
  double minimal = events_jsonl_ratio (build_minimal_event);
  double escaped = events_jsonl_ratio (build_escaped_execve);

  g_test_message ("derived bytes per stream byte: frames.jsonl %.2f, events.jsonl %.2f "
                  "(minimal event), %.2f (escaped execve); the bound allows %d", frames, minimal,
                  escaped, AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE);
  g_assert_cmpfloat (frames, <=, AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE);
  g_assert_cmpfloat (minimal, <=, AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE);
  g_assert_cmpfloat (escaped, <=, AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE);
  /* the table's own arithmetic: verify's bound is derived from the
   * stream's, and the stream bound is what the bundle writer keeps */
  g_assert_cmpuint (AIRLOCK_BOUND_DERIVED_FILE, ==,
                    AIRLOCK_BOUND_EVIDENCE_STREAM * AIRLOCK_BOUND_DERIVED_PER_STREAM_BYTE);
}

/* airlock_evidence_escape_bytes (public: the command prints a workload's
 * output through it): printable ASCII and harmless UTF-8 as they are,
 * everything that could move a terminal's cursor or disguise text as its
 * escape, and a truncated sequence at the end as bytes. */
static void
test_escape_bytes (void)
{
  static const guint8 plain[] = "GET / HTTP/1.1";
  static const guint8 hostile[] = "a\\b\n\t\r\x01\x1b[2J\x7f\xff"
                                  "\xe2\x80\xae" /* U+202E RIGHT-TO-LEFT OVERRIDE */
                                  "\xc3\xa9"      /* é */
                                  "\xe2\x80";     /* truncated */
  g_autofree char *p = airlock_evidence_escape_bytes (plain, sizeof plain - 1);
  g_autofree char *h = airlock_evidence_escape_bytes (hostile, sizeof hostile - 1);
  g_autofree char *empty = airlock_evidence_escape_bytes (NULL, 0);

  g_assert_cmpstr (p, ==, "GET / HTTP/1.1");
  g_assert_cmpstr (h, ==, "a\\\\b\\n\\t\\r\\x01\\x1b[2J\\x7f\\xff\\u{202e}\xc3\xa9\\xe2\\x80");
  g_assert_true (g_utf8_validate (h, -1, NULL));
  g_assert_cmpstr (empty, ==, "");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/evidence/channel/valid-stream-completes", test_valid_stream_completes);
  g_test_add_func ("/evidence/channel/byte-at-a-time-is-identical",
                   test_byte_at_a_time_is_identical);
  g_test_add_func ("/evidence/channel/random-chunks-are-identical",
                   test_random_chunks_are_identical);
  g_test_add_func ("/evidence/channel/max-payload-is-accepted", test_max_payload_is_accepted);
  g_test_add_func ("/evidence/channel/event-counted", test_event_counted);
  g_test_add_func ("/evidence/channel/wall-limit-end", test_wall_limit_end);

  for (gsize i = 0; i < G_N_ELEMENTS (anomaly_cases); i++)
    g_test_add_data_func (anomaly_cases[i].path, &anomaly_cases[i], test_anomaly);

  g_test_add_func ("/evidence/channel/close-before-hello-is-inconclusive",
                   test_close_before_hello);
  g_test_add_func ("/evidence/channel/close-inside-hello-is-inconclusive",
                   test_close_inside_hello);
  g_test_add_func ("/evidence/channel/closed-early-is-inconclusive", test_closed_early);
  g_test_add_func ("/evidence/channel/closed-mid-frame-is-inconclusive", test_closed_mid_frame);
  g_test_add_func ("/evidence/channel/heartbeat-gap-on-check-time-is-inconclusive",
                   test_heartbeat_gap_on_check_time);
  g_test_add_func ("/evidence/channel/heartbeat-gap-on-late-feed-is-inconclusive",
                   test_heartbeat_gap_on_late_feed);
  g_test_add_func ("/evidence/channel/heartbeat-resets-deadline", test_heartbeat_resets_deadline);
  g_test_add_func ("/evidence/channel/events-do-not-reset-deadline",
                   test_events_do_not_reset_deadline);
  g_test_add_func ("/evidence/channel/gap-before-close-is-reported",
                   test_gap_before_close_is_reported);
  g_test_add_func ("/evidence/channel/no-gap-check-before-hello-or-after-complete",
                   test_no_gap_check_before_hello_or_after_complete);
  g_test_add_func ("/evidence/channel/empty-first-read", test_empty_first_read);
  g_test_add_func ("/evidence/channel/after-trailer-later-read-is-inconclusive",
                   test_after_trailer_later_read);
  g_test_add_func ("/evidence/channel/raw-kept-after-anomaly", test_raw_kept_after_anomaly);
  g_test_add_func ("/evidence/channel/fail-after-complete-does-nothing",
                   test_fail_after_complete_does_nothing);
  g_test_add_func ("/evidence/channel/fail-sets-external", test_fail_sets_external);
  g_test_add_func ("/evidence/channel/fail-after-anomaly-keeps-first",
                   test_fail_after_anomaly_keeps_first);
  g_test_add_func ("/evidence/channel/frame-func-can-fail-the-run",
                   test_frame_func_can_fail_the_run);
  g_test_add_func ("/evidence/channel/hostile-strings-are-escaped",
                   test_hostile_strings_are_escaped);
  g_test_add_func ("/evidence/channel/host-hello-layout", test_host_hello_layout);
  g_test_add_func ("/evidence/channel/new-random-uses-fresh-nonces",
                   test_new_random_uses_fresh_nonces);
  g_test_add_func ("/evidence/chain/matches-independent-sha256",
                   test_chain_matches_independent_sha256);
  g_test_add_func ("/evidence/chain/any-byte-change-is-detected",
                   test_chain_any_byte_change_is_detected);
  g_test_add_func ("/evidence/chain/depends-on-nonce", test_chain_depends_on_nonce);
  g_test_add_func ("/evidence/frame/header-prefixes-are-incomplete", test_header_prefixes);
  g_test_add_func ("/evidence/frame/header-errors-are-early", test_header_errors_are_early);
  g_test_add_func ("/evidence/frame/tlv-iter-bounds", test_tlv_iter_bounds);
  g_test_add_func ("/evidence/frame/escape-bytes", test_escape_bytes);
  g_test_add_func ("/evidence/anomaly/names-are-distinct", test_anomaly_names_are_distinct);
  g_test_add_func ("/evidence/bound/stream-bound-is-inconclusive", test_stream_bound_is_inconclusive);
  g_test_add_func ("/evidence/bound/derived-bound-holds-a-maximal-run",
                   test_derived_bound_holds_a_maximal_run);

  return g_test_run ();
}
