/* libFuzzer harness for the evidence channel decoder (lib/evidence).
 *
 * The input is a guest → host byte stream, arbitrary.  It is fed to four
 * channels: in one read, one byte per read (for the first 2 KiB), in
 * pseudo-random reads, and in pseudo-random reads with the clock advancing
 * (so heartbeat gaps happen).
 * The chunkings come from a hash of the input, so a crash reproduces from
 * the input file alone.
 *
 * Besides the sanitizers' findings, it aborts when an invariant breaks:
 *   - the raw stream is exactly the bytes fed, in every state;
 *   - accepted frames tile the start of the stream, are numbered 0, 1, …,
 *     start with a hello, carry their own payload, and their chain values
 *     match SHA-256 recomputed here from the raw bytes;
 *   - INCONCLUSIVE always has an anomaly and a reason, other states neither;
 *     after close() the channel is final, and fail() changes nothing then;
 *   - strings the guest controls come out as valid UTF-8 without controls;
 *   - the verdict (state, anomaly, reason, frames, chain head) does not
 *     depend on how the stream was split into reads;
 *   - with the clock running, the frames accepted are a prefix of those
 *     accepted without it;
 *   - every accepted EVENT frame decodes (event.c), or is refused with a
 *     reason, and what it renders (key line, outcome, addresses) is safe
 *     text. */
#include "config.h"

#include "evidence/channel.h"
#include "evidence/event.h"

#include "fuzz-channel.h"
#include "fuzz-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_MONO_US 1000000
#define FUZZ_REAL_US 1700000000000000

typedef struct {
  guint64 calls;
  gsize next_offset;
} FrameCheck;

/* Runs inside feed(): frames arrive in order and tile the stream. */
static void
check_frame (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  FrameCheck *fc = user_data;

  fuzz_check (frame->seq == fc->calls);
  fuzz_check (frame->offset == fc->next_offset);
  fuzz_check (frame->size == 16 + g_bytes_get_size (frame->payload));
  fuzz_check (airlock_channel_get_state (channel) != AIRLOCK_CHANNEL_INCONCLUSIVE);
  fc->calls++;
  fc->next_offset += frame->size;
}

static void
sha256_pair (const guint8 *a, gsize a_len, const guint8 *b, gsize b_len, guint8 out[32])
{
  GChecksum *checksum = g_checksum_new (G_CHECKSUM_SHA256);
  gsize len = 32;

  g_checksum_update (checksum, a, (gssize) a_len);
  g_checksum_update (checksum, b, (gssize) b_len);
  g_checksum_get_digest (checksum, out, &len);
  g_checksum_free (checksum);
}

/* The channel accepted these EVENT frames, so their TLVs follow the rules:
 * the event log either decodes each or refuses it with a reason (a RESULT
 * naming nothing); whatever it renders must be safe to print. */
static void
check_events (GPtrArray *frames)
{
  AirlockEventLog *events = airlock_event_log_new ();

  for (guint i = 0; i < frames->len; i++)
    {
      const AirlockFrame *frame = frames->pdata[i];
      GError *error = NULL;
      GPtrArray *decoded;
      const AirlockEvent *ev;
      char *text;

      if (frame->type != AIRLOCK_FRAME_EVENT)
        continue;
      if (!airlock_event_log_add_frame (events, frame, &error))
        {
          fuzz_check (error != NULL);
          fuzz_check (error->code == AIRLOCK_EVENT_ERROR_BAD_REF);
          fuzz_check_safe_text (error->message);
          g_error_free (error);
          continue;
        }
      decoded = airlock_event_log_get_events (events);
      ev = decoded->pdata[decoded->len - 1];
      fuzz_check (ev->seq == frame->seq);
      text = airlock_event_key_line (ev);
      fuzz_check ((text != NULL) == (ev->kind == AIRLOCK_EVENT_SYSCALL));
      if (text)
        fuzz_check_safe_text (text);
      g_free (text);
      text = airlock_event_outcome (ev);
      fuzz_check_safe_text (text);
      g_free (text);
      if (airlock_event_get_destination (ev))
        {
          text = airlock_sockaddr_to_string (airlock_event_get_destination (ev));
          fuzz_check_safe_text (text);
          g_free (text);
        }
      for (guint j = 0; ev->argv && ev->argv[j]; j++)
        fuzz_check_safe_text (ev->argv[j]);
    }
  airlock_event_log_free (events);
}

static void
check_channel (AirlockChannel *channel, const guint8 *data, gsize size, const FrameCheck *fc)
{
  GBytes *raw = airlock_channel_get_raw (channel);
  GPtrArray *frames = airlock_channel_get_frames (channel);
  GPtrArray *log = airlock_channel_get_log (channel);
  AirlockChannelState state = airlock_channel_get_state (channel);
  AirlockAnomaly anomaly = airlock_channel_get_anomaly (channel);
  const char *reason = airlock_channel_get_reason (channel);
  const AirlockGuestHello *hello = airlock_channel_get_hello (channel);
  const AirlockTrailer *trailer = airlock_channel_get_trailer (channel);
  const guint8 *host_hello;
  gsize host_hello_len = 0;
  guint8 chain[32];
  gsize offset = 0;
  guint64 heartbeats = 0;
  guint64 events = 0;
  guint logs = 0;

  fuzz_check (g_bytes_get_size (raw) == size);
  fuzz_check (size == 0 || memcmp (g_bytes_get_data (raw, NULL), data, size) == 0);

  fuzz_check (state == AIRLOCK_CHANNEL_COMPLETE || state == AIRLOCK_CHANNEL_INCONCLUSIVE);
  if (state == AIRLOCK_CHANNEL_INCONCLUSIVE)
    {
      fuzz_check (anomaly != AIRLOCK_ANOMALY_NONE);
      fuzz_check (reason != NULL && reason[0] != '\0');
      fuzz_check (g_utf8_validate (reason, -1, NULL));
    }
  else
    {
      fuzz_check (anomaly == AIRLOCK_ANOMALY_NONE);
      fuzz_check (reason == NULL);
      fuzz_check (trailer != NULL);
    }
  fuzz_check (strcmp (airlock_anomaly_to_string (anomaly), "invalid") != 0);

  host_hello = airlock_channel_get_host_hello (channel, &host_hello_len);
  fuzz_check (host_hello_len == AIRLOCK_HOST_HELLO_SIZE);
  sha256_pair ((const guint8 *) "airlock-chain-v1", 16, host_hello, host_hello_len, chain);

  fuzz_check (fc->calls == frames->len);
  for (guint i = 0; i < frames->len; i++)
    {
      const AirlockFrame *frame = frames->pdata[i];
      gsize payload_len = g_bytes_get_size (frame->payload);
      guint8 next[32];

      fuzz_check (frame->seq == i);
      fuzz_check (frame->offset == offset);
      fuzz_check (payload_len <= AIRLOCK_FRAME_MAX_PAYLOAD);
      fuzz_check (frame->size == AIRLOCK_FRAME_HEADER_SIZE + payload_len);
      fuzz_check (frame->offset + frame->size <= size);
      fuzz_check (memcmp (data + frame->offset, AIRLOCK_FRAME_MAGIC, 4) == 0);
      fuzz_check (data[frame->offset + 5] == frame->type);
      fuzz_check (payload_len == 0
                  || memcmp (g_bytes_get_data (frame->payload, NULL),
                             data + frame->offset + AIRLOCK_FRAME_HEADER_SIZE, payload_len) == 0);
      fuzz_check ((i == 0) == (frame->type == AIRLOCK_FRAME_HELLO));
      fuzz_check (frame->type != AIRLOCK_FRAME_TRAILER || i + 1 == frames->len);
      fuzz_check (frame->received_mono_us >= FUZZ_MONO_US);
      heartbeats += frame->type == AIRLOCK_FRAME_HEARTBEAT;
      events += frame->type == AIRLOCK_FRAME_EVENT;
      logs += frame->type == AIRLOCK_FRAME_LOG;

      sha256_pair (chain, 32, data + frame->offset, frame->size, next);
      memcpy (chain, next, 32);
      fuzz_check (memcmp (frame->chain, chain, 32) == 0);
      offset += frame->size;
    }
  fuzz_check (memcmp (airlock_channel_get_chain_head (channel), chain, 32) == 0);
  fuzz_check (airlock_channel_get_heartbeat_count (channel) == heartbeats);
  fuzz_check (log->len == logs);
  for (guint i = 0; i < log->len; i++)
    fuzz_check_safe_text (log->pdata[i]);

  fuzz_check ((hello != NULL) == (frames->len > 0));
  if (hello)
    {
      fuzz_check_safe_text (hello->arch);
      fuzz_check_safe_text (hello->kernel_release);
      fuzz_check_safe_text (hello->build_id_hex);
      fuzz_check (hello->second_open_errno == 16);
    }
  if (trailer)
    {
      const AirlockFrame *last = frames->pdata[frames->len - 1];

      fuzz_check (last->type == AIRLOCK_FRAME_TRAILER);
      fuzz_check (trailer->frame_count == last->seq);
      fuzz_check (trailer->heartbeat_count == heartbeats);
      fuzz_check (trailer->event_count == events);
      fuzz_check (trailer->end_reason >= 1 && trailer->end_reason <= 3);
    }
  if (state == AIRLOCK_CHANNEL_COMPLETE)
    fuzz_check (offset == size);

  check_events (frames);

  /* Final now: an outside failure must not rewrite the verdict. */
  airlock_channel_fail (channel, AIRLOCK_ANOMALY_EXTERNAL, "fuzz: late failure");
  fuzz_check (airlock_channel_get_state (channel) == state);
  fuzz_check (airlock_channel_get_anomaly (channel) == anomaly);
  fuzz_check (airlock_channel_get_reason (channel) == reason);
}

static AirlockChannel *
run (const guint8 *data, gsize size, FuzzFeed mode, guint64 seed, FrameCheck *fc)
{
  AirlockChannel *channel = airlock_channel_new (fuzz_channel_nonce, FUZZ_CHANNEL_HEARTBEAT_MS,
                                                 FUZZ_CHANNEL_TOLERANCE_MS);
  guint64 rng = seed;
  gint64 mono = FUZZ_MONO_US;
  gsize pos = 0;

  memset (fc, 0, sizeof *fc);
  airlock_channel_set_frame_func (channel, check_frame, fc);

  while (pos < size)
    {
      gsize n = fuzz_feed_next (mode, pos, size, &rng);

      airlock_channel_feed (channel, data + pos, n, mono, FUZZ_REAL_US + (mono - FUZZ_MONO_US));
      pos += n;
      if (mode == FUZZ_FEED_TIMED)
        {
          /* up to twice the tolerance between reads, so gaps are common */
          mono += (gint64) (fuzz_splitmix64 (&rng) % (2 * FUZZ_CHANNEL_TOLERANCE_MS * 1000 + 1));
          if (fuzz_splitmix64 (&rng) % 8 == 0)
            airlock_channel_check_time (channel, mono);
        }
    }

  airlock_channel_check_time (channel, mono);
  airlock_channel_close (channel, mono);
  return channel;
}

static void
check_same_verdict (AirlockChannel *a, AirlockChannel *b)
{
  GPtrArray *fa = airlock_channel_get_frames (a);
  GPtrArray *fb = airlock_channel_get_frames (b);

  fuzz_check (airlock_channel_get_state (a) == airlock_channel_get_state (b));
  fuzz_check (airlock_channel_get_anomaly (a) == airlock_channel_get_anomaly (b));
  fuzz_check (g_strcmp0 (airlock_channel_get_reason (a), airlock_channel_get_reason (b)) == 0);
  fuzz_check (fa->len == fb->len);
  fuzz_check (memcmp (airlock_channel_get_chain_head (a), airlock_channel_get_chain_head (b),
                      32) == 0);
}

/* The frames @timed accepted are the first frames @untimed accepted. */
static void
check_prefix (AirlockChannel *timed, AirlockChannel *untimed)
{
  GPtrArray *ft = airlock_channel_get_frames (timed);
  GPtrArray *fu = airlock_channel_get_frames (untimed);

  fuzz_check (ft->len <= fu->len);
  for (guint i = 0; i < ft->len; i++)
    {
      const AirlockFrame *x = ft->pdata[i];
      const AirlockFrame *y = fu->pdata[i];

      fuzz_check (x->offset == y->offset && x->size == y->size);
      fuzz_check (memcmp (x->chain, y->chain, 32) == 0);
    }
  if (airlock_channel_get_state (timed) == AIRLOCK_CHANNEL_COMPLETE)
    check_same_verdict (timed, untimed);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint64 seed = fuzz_input_hash (data, size);
  FrameCheck fc_whole, fc_bytes, fc_random, fc_timed;
  AirlockChannel *whole = run (data, size, FUZZ_FEED_WHOLE, seed, &fc_whole);
  AirlockChannel *bytes = run (data, size, FUZZ_FEED_BYTES, seed, &fc_bytes);
  AirlockChannel *chunked = run (data, size, FUZZ_FEED_RANDOM, seed, &fc_random);
  AirlockChannel *timed = run (data, size, FUZZ_FEED_TIMED, seed ^ 0x5555, &fc_timed);

  check_channel (whole, data, size, &fc_whole);
  check_channel (bytes, data, size, &fc_bytes);
  check_channel (chunked, data, size, &fc_random);
  check_channel (timed, data, size, &fc_timed);

  check_same_verdict (whole, bytes);
  check_same_verdict (whole, chunked);
  check_prefix (timed, whole);

  airlock_channel_free (whole);
  airlock_channel_free (bytes);
  airlock_channel_free (chunked);
  airlock_channel_free (timed);
  return 0;
}
