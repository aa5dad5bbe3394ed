/* The test-only misbehaviours of airlock.test=MODE (enum test_mode,
 * init.h): those that act on the frames channel_send() sends, and those
 * that act right after the hello.  tests/vm and tests/hostile use them to
 * prove the host detects each anomaly the protocol defines. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "init.h"

#define TEST_FRAME_TYPE_UNKNOWN 99

struct channel_misbehaviour misbehaviour = { .test = TEST_NONE };

/* The u32 value of TLV @tag in frame @bytes (@len bytes, header included),
 * or -1 when it has none.  Only ever reads frames this init encoded. */
int64_t
frame_get_u32 (const uint8_t *bytes, size_t len, uint16_t tag)
{
  size_t off = AIRLOCK_FRAME_HEADER_SIZE;

  while (off + AIRLOCK_TLV_HEADER_SIZE <= len)
    {
      uint16_t t = wire_get_le16 (bytes + off);
      uint16_t l = wire_get_le16 (bytes + off + 2);

      if (off + AIRLOCK_TLV_HEADER_SIZE + l > len)
        break;
      if (t == tag && l == 4)
        return wire_get_le32 (bytes + off + AIRLOCK_TLV_HEADER_SIZE);
      off += AIRLOCK_TLV_HEADER_SIZE + l;
    }
  return -1;
}

/* Crashes the kernel (sysrq-trigger works whatever kernel.sysrq says).
 * Returns only when that failed: never, then dies naming why. */
__attribute__ ((noreturn)) void
crash_kernel (void)
{
  int fd = open ("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);

  if (fd < 0 || write (fd, "c", 1) != 1)
    die ("cannot crash the kernel through '/proc/sysrq-trigger': %s", strerror (errno));
  die ("the kernel did not crash after sysrq 'c'");
}

/* TEST_PANIC_MID_RUN: is the frame about to be sent the moment to crash?
 * The second heartbeat since the workload started, or its exit (or the
 * trailer) should that come first, so the crash never misses the run. */
bool
panic_due (const uint8_t *bytes, size_t len)
{
  uint8_t type = bytes[5];

  if (!misbehaviour.panic_armed)
    return false;
  if (type == AIRLOCK_FRAME_HEARTBEAT)
    return ++misbehaviour.panic_heartbeats >= 2;
  return type == AIRLOCK_FRAME_TRAILER
         || (type == AIRLOCK_FRAME_EVENT
             && frame_get_u32 (bytes, len, AIRLOCK_TLV_EV_KIND) == AIRLOCK_EVENT_WORKLOAD_EXIT);
}

/* ---- test modes acting right after the hello -------------------------- */

/* Returns only for modes that act later (or not at all). */
void
misbehave_after_hello (enum test_mode test)
{
  switch (test)
    {
    case TEST_OVERSIZE:
      {
        /* A header whose length is one past the bound, then fewer bytes
         * than it claims: the host must reject it at the header, without
         * waiting for (or buffering) the payload it announces. */
        struct wire_frame f;
        int r;

        wire_begin (&f, AIRLOCK_FRAME_LOG, channel.seq);
        wire_le16 (f.bytes + 6, AIRLOCK_FRAME_MAX_PAYLOAD + 1);
        memset (f.bytes + AIRLOCK_FRAME_HEADER_SIZE, 'A', 64);
        r = write_all (channel.fd, f.bytes, AIRLOCK_FRAME_HEADER_SIZE + 64);
        if (r < 0)
          console_log ("cannot send the oversize frame: %s", strerror (-r));
        /* The stream cannot be framed after this: nothing more to say. */
        power_off ();
      }

    case TEST_UNKNOWN_TYPE:
      {
        /* Well formed in every other way, so the type is the only anomaly;
         * the run then goes on normally. */
        struct wire_frame f;
        int r;

        wire_begin (&f, TEST_FRAME_TYPE_UNKNOWN, channel.seq);
        wire_put_str (&f, AIRLOCK_TLV_MESSAGE, "test frame of an unknown type");
        r = channel_send (&f, NULL);
        if (r < 0)
          die ("cannot send the unknown-type frame: %s", strerror (-r));
        return;
      }

    case TEST_NO_HEARTBEAT:
      /* PID 1 ignores signals it has no handler for: this never returns,
       * and the host must notice the missing heartbeats and destroy us. */
      for (;;)
        pause ();

    case TEST_PANIC:
      crash_kernel ();

    case TEST_GARBAGE:
      {
        /* Bytes that are no frame at all, as a corrupted or hostile stream
         * would be: the host must stop where the next frame should start,
         * never buffer or resynchronise.  GRND_INSECURE: never blocks on an
         * entropy pool this early in boot (unpredictable enough for junk).
         * The first byte is never 'A', so it cannot start the magic. */
        uint8_t junk[4096];
        ssize_t n = getrandom (junk, sizeof junk, GRND_INSECURE);
        int r;

        if (n != (ssize_t) sizeof junk)
          {
            uint64_t x = clock_ns (CLOCK_MONOTONIC) | 1;

            for (size_t i = 0; i < sizeof junk; i++)
              {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                junk[i] = (uint8_t) x;
              }
          }
        if (junk[0] == 'A')
          junk[0] ^= 0x80;
        console_log ("test mode: sending %zu bytes of garbage", sizeof junk);
        r = write_all (channel.fd, junk, sizeof junk);
        if (r < 0)
          console_log ("cannot send the garbage: %s", strerror (-r));
        /* The stream cannot be framed after this: nothing more to say. */
        power_off ();
      }

    case TEST_NONE:
    case TEST_UNSUPERVISED:
    case TEST_HOOKS_RING_MIN:
    case TEST_HOOKS_RING_STALL:
    case TEST_SKIP_CONTROL:
    case TEST_WRONG_NONCE:
    case TEST_SEQ_GAP:
    case TEST_NO_TRAILER:
    case TEST_PANIC_MID_RUN:
    case TEST_REPLAY_FRAME:
    case TEST_STALE_NONCE:
    case TEST_UNKNOWN:
      return;
    }
}

