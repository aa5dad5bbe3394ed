/* The network hold, under a warped clock only (AIRLOCK_SPEC_WARP).
 *
 * QEMU's `-icount sleep=off` moves the guest's clock to its next timer the
 * moment every vCPU idles.  A workload that sends a DNS query or a SYN and
 * then waits for the answer idles the guest, so its own timeout (a
 * resolver's 5 s, a probe's 1 s) fires at once, in host microseconds —
 * while the answer is still on its way from the sinkhole, which runs in the
 * host's time.  On a loaded host the answers lost that race (3 of 6 egress
 * gates lost their DNS answer on arm64 with two busy host loops).
 *
 * So after every network call the supervisor handles, a thread of PID 1
 * keeps the vCPU busy for HOLD_NS of guest time: while it spins the clock
 * follows the instructions executed (4 ns each at shift=2) instead of
 * jumping, and no timer is skipped.  The spin reads the clock on every
 * turn: under the instruction counter a read of the timer ends TCG's
 * block, which costs the host more than the 4 ns it costs the guest, so the
 * guest's clock runs at 2-3 times the host's while it spins (measured: the
 * 2 s hold after net-http's last send took 0.7-1 s of ours) where a plain
 * loop ran it at 4.  It runs at SCHED_IDLE, so it takes no time from the
 * workload, and the hold ends early only when the workload does.  A loaded
 * host runs fewer instructions a second, so the hold lasts longer on the
 * wall clock exactly when the answers are slower.
 *
 * What it costs: at most HOLD_NS of guest time after a workload's last
 * network call before its clock may jump again; nothing under the real
 * clock, and nothing to a workload that makes no network call. */
#define _GNU_SOURCE

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "guest.h"
#include "net-hold.h"

/* Longer than the answer of a loaded host's sinkhole takes (milliseconds),
 * and short next to the hours a warped clock exists to skip. */
#define HOLD_NS (2ull * 1000 * 1000 * 1000)

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  bool running;          /* only the supervisor's main thread reads or sets it */
  bool stop;             /* under lock */
  uint64_t until;        /* CLOCK_MONOTONIC ns; atomic */
} hold = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static void *
hold_main (void *data)
{
  struct sched_param none = { 0 };

  (void) data;
  /* Only when nothing else in the guest would run. */
  (void) sched_setscheduler (0, SCHED_IDLE, &none);
  pthread_mutex_lock (&hold.lock);
  while (!hold.stop)
    {
      if (clock_ns (CLOCK_MONOTONIC) >= __atomic_load_n (&hold.until, __ATOMIC_ACQUIRE))
        {
          pthread_cond_wait (&hold.wake, &hold.lock);
          continue;
        }
      pthread_mutex_unlock (&hold.lock);
      /* The spin itself: the clock's read (the vDSO's, no system call)
       * and nothing else. */
      while (clock_ns (CLOCK_MONOTONIC) < __atomic_load_n (&hold.until, __ATOMIC_ACQUIRE)
             && !__atomic_load_n (&hold.stop, __ATOMIC_ACQUIRE))
        ;
      pthread_mutex_lock (&hold.lock);
    }
  pthread_mutex_unlock (&hold.lock);
  return NULL;
}

int
net_hold_start (void)
{
  hold.stop = false;
  __atomic_store_n (&hold.until, 0, __ATOMIC_RELEASE);
  if (pthread_create (&hold.thread, NULL, hold_main, NULL) != 0)
    return -1;
  hold.running = true;
  return 0;
}

void
net_hold_touch (void)
{
  uint64_t until;

  if (!hold.running)
    return;
  until = clock_ns (CLOCK_MONOTONIC) + HOLD_NS;
  pthread_mutex_lock (&hold.lock);
  if (until > hold.until)
    __atomic_store_n (&hold.until, until, __ATOMIC_RELEASE);
  pthread_cond_signal (&hold.wake);
  pthread_mutex_unlock (&hold.lock);
}

void
net_hold_stop (void)
{
  if (!hold.running)
    return;
  pthread_mutex_lock (&hold.lock);
  __atomic_store_n (&hold.stop, true, __ATOMIC_RELEASE);
  pthread_cond_signal (&hold.wake);
  pthread_mutex_unlock (&hold.lock);
  pthread_join (hold.thread, NULL);
  hold.running = false;
}
