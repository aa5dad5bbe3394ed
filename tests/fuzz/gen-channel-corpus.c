/* Writes the seed corpus for fuzz-channel (tests/fuzz/corpus/channel/):
 * valid streams that reach COMPLETE and malformed ones that stop at each
 * check, built with guest/wire.h like a guest would build them.
 *
 *   gen-channel-corpus DIR           write the seeds into DIR
 *   gen-channel-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"

#include "fuzz-channel.h"
#include "corpus-seed.h"

typedef struct {
  GByteArray *bytes;
  uint64_t seq;
  uint64_t heartbeats;
  uint64_t events;
  struct wire_frame frame;
} Seed;

static struct wire_frame *
seed_begin (Seed *s, uint8_t type)
{
  wire_begin (&s->frame, type, s->seq);
  return &s->frame;
}

static void
seed_end (Seed *s)
{
  size_t n = wire_end (&s->frame);

  g_assert (n > 0);
  g_byte_array_append (s->bytes, s->frame.bytes, (guint) n);
  s->seq++;
}

static void
seed_hello_with (Seed *s, const uint8_t *nonce, uint32_t second_open_errno)
{
  static const uint8_t build_id[20] = { 0xb1, 0x1d, 0x1d };
  struct wire_frame *f = seed_begin (s, AIRLOCK_FRAME_HELLO);

  wire_put (f, AIRLOCK_TLV_NONCE, nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (f, AIRLOCK_TLV_ARCH, "x86_64");
  wire_put_str (f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0-airlock");
  wire_put (f, AIRLOCK_TLV_BUILD_ID, build_id, sizeof build_id);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 250000000);
  wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, second_open_errno);
  seed_end (s);
}

static void
seed_hello (Seed *s)
{
  seed_hello_with (s, fuzz_channel_nonce, 16 /* EBUSY */);
}

static void
seed_heartbeat (Seed *s)
{
  s->heartbeats++;
  wire_put_u64 (seed_begin (s, AIRLOCK_FRAME_HEARTBEAT), AIRLOCK_TLV_UPTIME_NS,
                s->heartbeats * 1000000000ull);
  seed_end (s);
}

static void
seed_log (Seed *s, const char *message)
{
  wire_put_str (seed_begin (s, AIRLOCK_FRAME_LOG), AIRLOCK_TLV_MESSAGE, message);
  seed_end (s);
}

static void
seed_event (Seed *s)
{
  struct wire_frame *f = seed_begin (s, AIRLOCK_FRAME_EVENT);
  static const uint8_t args[48] = { 3 };
  /* family AF_INET, type SOCK_STREAM, protocol 0 */
  static const uint8_t socket_triple[12] = { 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 };
  /* sockaddr_in 192.0.2.1:80 */
  static const uint8_t sin[16] = { 2, 0, 0, 80, 192, 0, 2, 1 };
  static const char cmdline[] = "curl\0-s\0http://192.0.2.1/";

  /* A traced connect() with the tags a supervisor sends for one. */
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 1000000000ull + s->seq);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
  wire_put_u32 (f, AIRLOCK_TLV_EV_SYSCALL, 42);
  wire_put_u32 (f, AIRLOCK_TLV_EV_AUDIT_ARCH, 0xc000003e);
  wire_put (f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 100);
  wire_put_u32 (f, AIRLOCK_TLV_EV_TID, 100);
  wire_put_str (f, AIRLOCK_TLV_EV_EXE, "/usr/bin/curl");
  wire_put (f, AIRLOCK_TLV_EV_ARGV, cmdline, sizeof cmdline - 1);
  wire_put_u32 (f, AIRLOCK_TLV_EV_FD, 3);
  wire_put (f, AIRLOCK_TLV_EV_SOCKET, socket_triple, sizeof socket_triple);
  wire_put (f, AIRLOCK_TLV_EV_ADDR, sin, sizeof sin);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ADDRLEN, sizeof sin);
  s->events++;
  seed_end (s);
}

static void
seed_trailer_with (Seed *s, uint64_t frames, uint64_t heartbeats, uint64_t events,
                   uint32_t end_reason)
{
  struct wire_frame *f = seed_begin (s, AIRLOCK_FRAME_TRAILER);

  wire_put_u64 (f, AIRLOCK_TLV_FRAME_COUNT, frames);
  wire_put_u64 (f, AIRLOCK_TLV_HEARTBEAT_COUNT, heartbeats);
  wire_put_u64 (f, AIRLOCK_TLV_EVENT_COUNT, events);
  wire_put_u32 (f, AIRLOCK_TLV_EXIT_STATUS, 0);
  wire_put_u32 (f, AIRLOCK_TLV_END_REASON, end_reason);
  seed_end (s);
}

static void
seed_trailer (Seed *s)
{
  seed_trailer_with (s, s->seq, s->heartbeats, s->events, AIRLOCK_END_COMPLETED);
}

static void
seed_raw (Seed *s, const void *data, size_t len)
{
  g_byte_array_append (s->bytes, data, (guint) len);
}

/* One builder per seed file. */
typedef void (*SeedFunc) (Seed *s);

static void
valid_minimal (Seed *s)
{
  seed_hello (s);
  seed_trailer (s);
}

static void
valid_full (Seed *s)
{
  seed_hello (s);
  seed_heartbeat (s);
  seed_log (s, "supervisor: exec /usr/bin/app");
  seed_event (s);
  seed_heartbeat (s);
  seed_event (s);
  seed_event (s);
  seed_heartbeat (s);
  seed_trailer (s);
}

static void
valid_max_payload (Seed *s)
{
  char message[AIRLOCK_FRAME_MAX_PAYLOAD - AIRLOCK_TLV_HEADER_SIZE + 1];

  memset (message, 'x', sizeof message - 1);
  message[sizeof message - 1] = '\0';
  seed_hello (s);
  seed_log (s, message);
  seed_trailer (s);
}

static void
valid_hostile_strings (Seed *s)
{
  struct wire_frame *f = seed_begin (s, AIRLOCK_FRAME_HELLO);

  wire_put (f, AIRLOCK_TLV_NONCE, fuzz_channel_nonce, AIRLOCK_NONCE_LEN);
  wire_put (f, AIRLOCK_TLV_ARCH, "x86\0_64\x1b[2J", 11);
  wire_put (f, AIRLOCK_TLV_KERNEL_RELEASE, "\xe2\x80\xae\xff\xfe\xc0\x80", 7);
  wire_put (f, AIRLOCK_TLV_BUILD_ID, "", 0);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, 16);
  seed_end (s);
  seed_log (s, "\"}],\n\\u0000\r\x7f\xed\xa0\x80");
  seed_trailer_with (s, 2, 0, 0, AIRLOCK_END_ERROR);
}

static void
wrong_nonce (Seed *s)
{
  uint8_t nonce[AIRLOCK_NONCE_LEN];

  memcpy (nonce, fuzz_channel_nonce, sizeof nonce);
  nonce[0] ^= 0x80;
  seed_hello_with (s, nonce, 16);
  seed_trailer (s);
}

static void
not_exclusive (Seed *s)
{
  seed_hello_with (s, fuzz_channel_nonce, 0);
  seed_trailer (s);
}

static void
no_hello (Seed *s)
{
  seed_heartbeat (s);
  seed_trailer (s);
}

static void
sequence_gap (Seed *s)
{
  seed_hello (s);
  seed_heartbeat (s);
  s->seq++;
  seed_heartbeat (s);
  seed_trailer (s);
}

static void
sequence_replay (Seed *s)
{
  seed_hello (s);
  seed_heartbeat (s);
  s->seq--;
  seed_heartbeat (s);
}

static void
bad_magic (Seed *s)
{
  seed_hello (s);
  seed_raw (s, "[    0.000000] Linux version 6.1.0\n", 35);
}

static void
bad_version (Seed *s)
{
  seed_hello (s);
  seed_heartbeat (s);
  /* a heartbeat is a header and one 12-byte TLV; its version byte */
  s->bytes->data[s->bytes->len - (AIRLOCK_FRAME_HEADER_SIZE + 12) + 4] = 2;
}

static void
oversize (Seed *s)
{
  uint8_t header[AIRLOCK_FRAME_HEADER_SIZE] = { 'A', 'L', 'K', 'F', AIRLOCK_PROTO_VERSION,
                                                AIRLOCK_FRAME_EVENT };

  seed_hello (s);
  wire_le16 (header + 6, 0xffff);
  wire_le64 (header + 8, 1);
  seed_raw (s, header, sizeof header);
}

static void
unknown_type (Seed *s)
{
  seed_hello (s);
  seed_begin (s, 6);
  seed_end (s);
}

static void
tlv_overrun (Seed *s)
{
  seed_hello (s);
  seed_heartbeat (s);
  /* the uptime TLV's length, 8 → 0x0108 */
  s->bytes->data[s->bytes->len - 12 + 3] = 1;
}

static void
duplicate_tag (Seed *s)
{
  struct wire_frame *f;

  seed_hello (s);
  f = seed_begin (s, AIRLOCK_FRAME_HEARTBEAT);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 2);
  seed_end (s);
}

static void
trailer_mismatch (Seed *s)
{
  seed_hello (s);
  seed_heartbeat (s);
  seed_event (s);
  seed_trailer_with (s, 3, 1, 7, AIRLOCK_END_COMPLETED);
}

static void
after_trailer (Seed *s)
{
  valid_minimal (s);
  seed_heartbeat (s);
}

static void
truncated (Seed *s)
{
  valid_full (s);
  g_byte_array_set_size (s->bytes, s->bytes->len - 7);
}

static const struct {
  const char *name;
  SeedFunc build;
} seeds[] = {
  { "valid-minimal", valid_minimal },
  { "valid-full", valid_full },
  { "valid-max-payload", valid_max_payload },
  { "valid-hostile-strings", valid_hostile_strings },
  { "wrong-nonce", wrong_nonce },
  { "not-exclusive", not_exclusive },
  { "no-hello", no_hello },
  { "sequence-gap", sequence_gap },
  { "sequence-replay", sequence_replay },
  { "bad-magic", bad_magic },
  { "bad-version", bad_version },
  { "oversize", oversize },
  { "unknown-type", unknown_type },
  { "tlv-overrun", tlv_overrun },
  { "duplicate-tag", duplicate_tag },
  { "trailer-mismatch", trailer_mismatch },
  { "after-trailer", after_trailer },
  { "truncated", truncated },
};

/* Seed @i, built into a stream of its own. */
static GByteArray *
build_seed (gsize i, const char **ret_name)
{
  Seed s = { .bytes = g_byte_array_new () };

  seeds[i].build (&s);
  *ret_name = seeds[i].name;
  return s.bytes;
}

static const CorpusSet channel = { .n_seeds = G_N_ELEMENTS (seeds), .seed_build = build_seed };

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, &channel, 1);
}
