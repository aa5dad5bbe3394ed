/* The clock hold, under a warped clock only (AIRLOCK_SPEC_WARP).
 *
 * QEMU's `-icount sleep=off` moves the guest's clock to its next timer the
 * moment every vCPU idles.  Two kinds of idle are not the workload's own
 * and must not count as hours of its time:
 *
 * - After a network call.  A workload that sends a DNS query or a SYN and
 *   then waits for the answer idles the guest, so its own timeout (a
 *   resolver's 5 s, a probe's 1 s) fires at once, in host microseconds —
 *   while the answer is still on its way from the sinkhole, which runs in
 *   the host's time.  On a loaded host the answers lost that race (3 of 6
 *   egress gates lost their DNS answer on arm64 with two busy host loops).
 *   So after every network call the recorder sees, the clock is held for
 *   HOLD_NS of guest time (clock_hold_after_network).
 *
 * - While PID 1 waits for the host to take what it writes to a port (the
 *   workload's stdout relayed to the stdio port, records to the evidence
 *   port, frames to the network port).  A workload that floods its stdout
 *   blocks on a full pipe while the host drains the port at its own pace;
 *   to the warp that is idle time, and on a slow host (the ASan build)
 *   eight MiB of output let the guest's six-hour limit pass before the
 *   workload could finish writing them (/arm64/hostile/stdout-flood, once
 *   the idle guest's own timers were off).  So a port write that would
 *   block holds the clock until it can go on (clock_hold_write_all).
 *
 * The hold is a thread of PID 1 that keeps the vCPU busy: while it spins
 * the clock follows the instructions executed (4 ns each at shift=2)
 * instead of jumping, and no timer is skipped.  The spin reads the clock on
 * every turn: under the instruction counter a read of the timer ends TCG's
 * block, which costs the host more than the 4 ns it costs the guest, so the
 * guest's clock runs at 2-3 times the host's while it spins (measured: the
 * 2 s hold after net-http's last send took 0.7-1 s of ours) where a plain
 * loop ran it at 4.  It runs at SCHED_IDLE, so it takes no time from the
 * workload, and the hold ends early only when the workload does.  A loaded
 * host runs fewer instructions a second, so the hold lasts longer on the
 * wall clock exactly when the answers are slower.
 *
 * What it costs: at most HOLD_NS of guest time after a workload's last
 * network call before its clock may jump again, and a poll(2) before each
 * port write; nothing under the real clock, and nothing to a workload that
 * makes no network call and whose output the host keeps up with.  It does
 * not let a workload slow its own clock more than it always could: a
 * workload that keeps a CPU busy (a loop, or writing output without end)
 * runs its clock at the instructions' pace with or without the hold, and
 * the report says how much guest time the wall limit let it watch. */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "guest.h"
#include "clock-hold.h"

/* Longer than the answer of a loaded host's sinkhole takes (milliseconds),
 * and short next to the hours a warped clock exists to skip. */
#define HOLD_NS (2ull * 1000 * 1000 * 1000)

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  bool running;          /* set by the supervisor's main thread; atomic */
  bool stop;             /* under lock */
  uint64_t until;        /* CLOCK_MONOTONIC ns; atomic */
  unsigned waiting;      /* port writes waiting for the host; atomic */
} hold = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

/* Whether the clock is held now. */
static bool
held (void)
{
  return __atomic_load_n (&hold.waiting, __ATOMIC_ACQUIRE) > 0
         || clock_ns (CLOCK_MONOTONIC) < __atomic_load_n (&hold.until, __ATOMIC_ACQUIRE);
}

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
      if (!held ())
        {
          pthread_cond_wait (&hold.wake, &hold.lock);
          continue;
        }
      pthread_mutex_unlock (&hold.lock);
      /* The spin itself: the clock's read (the vDSO's, no system call)
       * and nothing else. */
      while (held () && !__atomic_load_n (&hold.stop, __ATOMIC_ACQUIRE))
        ;
      pthread_mutex_lock (&hold.lock);
    }
  pthread_mutex_unlock (&hold.lock);
  return NULL;
}

int
clock_hold_start (void)
{
  hold.stop = false;
  __atomic_store_n (&hold.until, 0, __ATOMIC_RELEASE);
  if (pthread_create (&hold.thread, NULL, hold_main, NULL) != 0)
    return -1;
  __atomic_store_n (&hold.running, true, __ATOMIC_RELEASE);
  return 0;
}

void
clock_hold_after_network (void)
{
  uint64_t until;

  if (!__atomic_load_n (&hold.running, __ATOMIC_ACQUIRE))
    return;
  until = clock_ns (CLOCK_MONOTONIC) + HOLD_NS;
  pthread_mutex_lock (&hold.lock);
  if (until > hold.until)
    __atomic_store_n (&hold.until, until, __ATOMIC_RELEASE);
  pthread_cond_signal (&hold.wake);
  pthread_mutex_unlock (&hold.lock);
}

/* Returns once @fd takes a write (or says why not: the write that follows
 * does); the clock is held meanwhile.  A port that is writable costs one
 * poll(2) and no wakeup of the hold's thread. */
static void
wait_writable (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLOUT };

  if (poll (&p, 1, 0) != 0)
    return;   /* writable, or hung up or failed: the write will say */
  /* Counted before the signal, and the signal under the lock the thread
   * waits with, so the thread either sees the count or is woken. */
  if (__atomic_fetch_add (&hold.waiting, 1, __ATOMIC_ACQ_REL) == 0)
    {
      pthread_mutex_lock (&hold.lock);
      pthread_cond_signal (&hold.wake);
      pthread_mutex_unlock (&hold.lock);
    }
  while (poll (&p, 1, -1) < 0 && errno == EINTR)
    ;
  __atomic_fetch_sub (&hold.waiting, 1, __ATOMIC_ACQ_REL);
}

int
clock_hold_write_all (int fd, const void *buf, size_t len)
{
  return write_all_waiting (fd, buf, len,
                            __atomic_load_n (&hold.running, __ATOMIC_ACQUIRE) ? wait_writable : NULL);
}

void
clock_hold_stop (void)
{
  if (!__atomic_load_n (&hold.running, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock (&hold.lock);
  __atomic_store_n (&hold.stop, true, __ATOMIC_RELEASE);
  pthread_cond_signal (&hold.wake);
  pthread_mutex_unlock (&hold.lock);
  pthread_join (hold.thread, NULL);
  __atomic_store_n (&hold.running, false, __ATOMIC_RELEASE);
}
