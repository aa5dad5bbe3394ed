/* The evidence channel: the one writer of frames, from any thread (the
 * sequence numbers and counts under one lock), and the hello, heartbeat,
 * log and trailer frames.  The test modes that act on every frame sent
 * live here too, where every frame passes (those that act once, after the
 * hello: test-modes.c). */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock-hold.h"
#include "init.h"

struct channel channel = { .fd = -1 };

/* ---- test modes acting on every frame --------------------------------- */

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
 * Returns only when that failed. */
int
crash_kernel (void)
{
  int fd = open ("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
  int r = fd >= 0 && write (fd, "c", 1) == 1 ? -EIO : -errno;

  console_log ("%s: %s", r == -EIO ? "the kernel did not crash after sysrq 'c'"
                                   : "cannot crash the kernel through '/proc/sysrq-trigger'",
               strerror (-r));
  if (fd >= 0)
    close (fd);
  return r;
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

/* ---- frames ----------------------------------------------------------- */

static pthread_mutex_t channel_lock = PTHREAD_MUTEX_INITIALIZER;

int
channel_send (struct wire_frame *f, uint64_t *ret_seq)
{
  size_t len = wire_end (f);
  uint8_t type = f->bytes[5];
  int r;

  if (len == 0)
    return -EMSGSIZE;
  pthread_mutex_lock (&channel_lock);
  if (misbehaviour.test == TEST_PANIC_MID_RUN && panic_due (f->bytes, len))
    {
      misbehaviour.panic_armed = false;
      console_log ("test mode: crashing the kernel while the workload runs");
      pthread_mutex_unlock (&channel_lock);
      /* Returns only when the crash failed: the run goes on, and the host,
       * which waits for a panic, says the test failed. */
      crash_kernel ();
      pthread_mutex_lock (&channel_lock);
    }
  if (misbehaviour.test == TEST_REPLAY_FRAME && misbehaviour.replay_len > 0
      && !misbehaviour.replayed
      && (type == AIRLOCK_FRAME_HEARTBEAT || type == AIRLOCK_FRAME_TRAILER))
    {
      /* The earlier frame again, byte for byte: its own (old) sequence
       * number, so only the sequence check can tell.  Not counted in
       * frames_sent, so the trailer's counts stay those of the honest
       * stream and the replay is the only anomaly. */
      misbehaviour.replayed = true;
      console_log ("test mode: sending an earlier frame again");
      r = write_all (channel.fd, misbehaviour.replay, misbehaviour.replay_len);
      if (r < 0)
        {
          pthread_mutex_unlock (&channel_lock);
          return r;
        }
    }
  wire_le64 (f->bytes + 8, channel.seq);
  r = clock_hold_write_all (channel.fd, f->bytes, len);
  if (r == 0)
    {
      if (ret_seq)
        *ret_seq = channel.seq;
      channel.seq++;
      channel.frames_sent++;
      if (type == AIRLOCK_FRAME_EVENT)
        channel.events_sent++;
      if (type == AIRLOCK_FRAME_HEARTBEAT)
        channel.heartbeats_sent++;

      /* Here rather than in a run, so the gap happens under the
       * supervisor as in the boot check; counted in frames, because a
       * supervised run can end before its second heartbeat. */
      if (misbehaviour.test == TEST_SEQ_GAP && !misbehaviour.gap_done
          && channel.frames_sent == 3)
        {
          channel.seq++;   /* the next frame's number is never sent */
          misbehaviour.gap_done = true;
        }
      if (misbehaviour.test == TEST_REPLAY_FRAME && misbehaviour.replay_len == 0
          && type == misbehaviour.replay_type)
        {
          memcpy (misbehaviour.replay, f->bytes, len);
          misbehaviour.replay_len = len;
        }
      if (misbehaviour.test == TEST_PANIC_MID_RUN && type == AIRLOCK_FRAME_EVENT
          && frame_get_u32 (f->bytes, len, AIRLOCK_TLV_EV_KIND) == AIRLOCK_EVENT_WORKLOAD_START
          && frame_get_u32 (f->bytes, len, AIRLOCK_TLV_EV_PHASE) == AIRLOCK_PHASE_WORKLOAD)
        misbehaviour.panic_armed = true;
    }
  pthread_mutex_unlock (&channel_lock);
  return r;
}

int
channel_send_hello (const struct guest_identity *id, const uint8_t nonce[AIRLOCK_NONCE_LEN],
                    uint32_t second_open_errno, uint32_t recorder)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_HELLO, channel.seq);
  wire_put (&f, AIRLOCK_TLV_NONCE, nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (&f, AIRLOCK_TLV_ARCH, id->uts.machine);
  wire_put_str (&f, AIRLOCK_TLV_KERNEL_RELEASE, id->uts.release);
  wire_put (&f, AIRLOCK_TLV_BUILD_ID, id->build_id, id->build_id_len);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u32 (&f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, second_open_errno);
  if (recorder)
    wire_put_u32 (&f, AIRLOCK_TLV_RECORDER, recorder);
  return channel_send (&f, NULL);
}

int
channel_send_heartbeat (void)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_HEARTBEAT, channel.seq);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, clock_ns (CLOCK_BOOTTIME));
  return channel_send (&f, NULL);
}

int
channel_port (void)
{
  return channel.fd;
}

int
channel_send_log (const char *message)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_LOG, channel.seq);
  wire_put_str (&f, AIRLOCK_TLV_MESSAGE, message);
  return channel_send (&f, NULL);
}

void
channel_logf (const char *fmt, ...)
{
  char message[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (message, sizeof message, fmt, ap);
  va_end (ap);
  console_log ("%s", message);
  (void) channel_send_log (message);
}

int
channel_send_trailer (uint32_t exit_status, uint32_t end_reason, bool has_lost, uint64_t lost)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_TRAILER, channel.seq);
  /* Frames actually sent, not the trailer's seq: the two differ only under
   * TEST_SEQ_GAP, where an honest count leaves the gap itself as the only
   * anomaly for the host to find. */
  wire_put_u64 (&f, AIRLOCK_TLV_FRAME_COUNT, channel.frames_sent);
  wire_put_u64 (&f, AIRLOCK_TLV_HEARTBEAT_COUNT, channel.heartbeats_sent);
  wire_put_u64 (&f, AIRLOCK_TLV_EVENT_COUNT, channel.events_sent);
  wire_put_u32 (&f, AIRLOCK_TLV_EXIT_STATUS, exit_status);
  wire_put_u32 (&f, AIRLOCK_TLV_END_REASON, end_reason);
  if (has_lost)
    wire_put_u64 (&f, AIRLOCK_TLV_RECORDS_LOST, lost);
  return channel_send (&f, NULL);
}

int
channel_await_receipt (void)
{
  for (;;)
    {
      uint8_t buf[64];
      ssize_t n = read (channel.fd, buf, sizeof buf);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p = { .fd = channel.fd, .events = POLLIN };

          (void) poll (&p, 1, -1);
          continue;
        }
      if (n < 0)
        return -errno;
      if (n == 0)
        return -ECONNRESET;   /* virtio_console: no host on the port */
      if (memchr (buf, AIRLOCK_HOST_RECEIPT, (size_t) n))
        return 0;
    }
}
