/* The heartbeats while a workload runs: a thread of PID 1 that beats on
 * its own schedule (or, under a warped clock, answers the host's ticks and
 * hears its STOP), so a slow notification never delays one.  Part of the
 * supervisor (supervisor.c). */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"
#include "workload.h"

/* Heartbeats come from their own thread, on an absolute schedule, so a
 * slow notification (a large read of the workload's memory) never delays
 * one.  Stopping wakes it at once instead of a period later. */
static void *
heartbeat_main (void *data)
{
  struct heartbeat *hb = data;
  uint64_t period = hb->period_ms * NS_PER_MS;
  uint64_t next = clock_ns (CLOCK_MONOTONIC) + period;

  pthread_mutex_lock (&hb->lock);
  while (!hb->stop)
    {
      struct timespec ts = { .tv_sec = (time_t) (next / NS_PER_S), .tv_nsec = (long) (next % NS_PER_S) };
      uint64_t now;
      int r;

      if (pthread_cond_timedwait (&hb->wake, &hb->lock, &ts) != ETIMEDOUT || hb->stop)
        continue;
      pthread_mutex_unlock (&hb->lock);
      r = channel_send_heartbeat ();
      pthread_mutex_lock (&hb->lock);
      if (r < 0)
        {
          __atomic_store_n (&hb->error, r, __ATOMIC_RELEASE);
          break;
        }
      next += period;
      now = clock_ns (CLOCK_MONOTONIC);
      if (now > next)
        next += ((now - next) / period + 1) * period;
    }
  pthread_mutex_unlock (&hb->lock);
  return NULL;
}

/* The same under a warped clock: a beat per batch of the host's ticks
 * (protocol.h, AIRLOCK_HOST_TICK: a timer of guest time would fire every
 * 200 ms of the hours the clock skips, and in no bounded wall time while
 * the workload computes).  The ticks queued while no workload ran come as
 * one batch, so one beat answers them.  The host's STOP, and any failure,
 * wake the main loop through main_fd. */
static void *
heartbeat_host_paced_main (void *data)
{
  struct heartbeat *hb = data;
  int port = channel_port ();
  uint64_t one = 1;
  int r;

  for (;;)
    {
      struct pollfd fds[2] = {
        { .fd = hb->quit_fd, .events = POLLIN },
        { .fd = port, .events = POLLIN },
      };
      uint8_t buf[256];
      bool tick = false;
      ssize_t n;

      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          r = -errno;
          goto failed;
        }
      if (fds[0].revents)
        return NULL;
      if (!fds[1].revents)
        continue;
      n = read (port, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0)
        {
          /* 0: virtio_console's "no host connected" — the host is gone,
           * and a workload must not run on unwatched. */
          r = n < 0 ? -errno : -ECONNRESET;
          goto failed;
        }
      for (ssize_t i = 0; i < n; i++)
        if (buf[i] != AIRLOCK_HOST_STOP)
          {
            tick = true;
            __atomic_add_fetch (&hb->ticks, 1, __ATOMIC_ACQ_REL);
          }
        else if (!__atomic_exchange_n (&hb->host_stop, 1, __ATOMIC_ACQ_REL))
          (void) write (hb->main_fd, &one, sizeof one);
      if (tick && (r = channel_send_heartbeat ()) < 0)
        goto failed;
    }

failed:
  __atomic_store_n (&hb->error, r, __ATOMIC_RELEASE);
  (void) write (hb->main_fd, &one, sizeof one);
  return NULL;
}

int
heartbeat_start (struct heartbeat *hb, uint32_t period_ms, bool host_paced)
{
  pthread_condattr_t attr;

  hb->period_ms = period_ms;
  hb->stop = false;
  hb->error = 0;
  hb->host_paced = host_paced;
  hb->host_stop = 0;
  hb->ticks = 0;
  hb->quit_fd = hb->main_fd = -1;
  if (host_paced)
    {
      hb->quit_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      hb->main_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (hb->quit_fd < 0 || hb->main_fd < 0)
        return -errno;
      return pthread_create (&hb->thread, NULL, heartbeat_host_paced_main, hb) == 0 ? 0 : -EAGAIN;
    }
  pthread_mutex_init (&hb->lock, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&hb->wake, &attr);
  pthread_condattr_destroy (&attr);
  return pthread_create (&hb->thread, NULL, heartbeat_main, hb) == 0 ? 0 : -EAGAIN;
}

void
heartbeat_stop (struct heartbeat *hb)
{
  if (hb->host_paced)
    {
      uint64_t one = 1;

      (void) write (hb->quit_fd, &one, sizeof one);
      pthread_join (hb->thread, NULL);
      close (hb->quit_fd);
      close (hb->main_fd);
      return;
    }
  pthread_mutex_lock (&hb->lock);
  hb->stop = true;
  pthread_cond_signal (&hb->wake);
  pthread_mutex_unlock (&hb->lock);
  pthread_join (hb->thread, NULL);
}
