/* The test-only misbehaviours of airlock.test=MODE (enum test_mode,
 * init.h) that act right after the hello; those that act on the frames
 * channel_send() sends live in channel.c, which every frame goes through.
 * tests/vm and tests/hostile use them to prove the host detects each
 * anomaly the protocol defines.  A misbehaviour that itself fails says
 * why, and PID 1 dies with it (init.c). */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "init.h"

#define TEST_FRAME_TYPE_UNKNOWN 99

int
misbehave_after_hello (enum test_mode test, char *error, size_t error_size)
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
          return fail (error, error_size, "cannot send the unknown-type frame: %s",
                       strerror (-r));
        return 0;
      }

    case TEST_NO_HEARTBEAT:
      /* PID 1 ignores signals it has no handler for: this never returns,
       * and the host must notice the missing heartbeats and destroy us. */
      for (;;)
        pause ();

    case TEST_PANIC:
      {
        int r = crash_kernel ();

        return fail (error, error_size, "%s", r == -EIO
                     ? "the kernel did not crash after sysrq 'c'"
                     : "cannot crash the kernel through '/proc/sysrq-trigger'");
      }

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
    case TEST_HOOKS_OFF:
    case TEST_SKIP_CONTROL:
    case TEST_WRONG_NONCE:
    case TEST_SEQ_GAP:
    case TEST_NO_TRAILER:
    case TEST_PANIC_MID_RUN:
    case TEST_REPLAY_FRAME:
    case TEST_STALE_NONCE:
    case TEST_UNKNOWN:
      return 0;
    }
  return 0;
}

