/* Workloads of bench/supervisor: loops of system calls timed inside the
 * guest with CLOCK_MONOTONIC, so boot and teardown never enter the number.
 * Each prints one machine-readable line, which bench/supervisor reads from
 * the console:
 *
 *   testprog: COMMAND: bench: WHAT N ns_per_iter X
 *
 * With no argument they run a short loop (the VM test runs every behaviour
 * bare and checks its exact records, tests/guest/expected-records.h); the
 * benchmark passes the iteration count. */
#define _GNU_SOURCE

#include "testprog.h"
#include "supervisor.h"   /* filter_build (): the supervisor's own filter */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Iterations without an argument; bench-connect's and bench-sendto's are
 * also the numbers of records expected-records.h lists for them. */
#define DEFAULT_SYSCALL_ITERATIONS 1000
#define DEFAULT_CONNECT_ITERATIONS 3
#define DEFAULT_SENDTO_ITERATIONS 3
#define DEFAULT_WRITE_ITERATIONS 100
#define MAX_ITERATIONS 100000000L

static long
iterations (int argc, char **argv, long fallback)
{
  char *end;
  long n;

  if (argc < 2)
    return fallback;
  errno = 0;
  n = strtol (argv[1], &end, 10);
  if (errno || *end || end == argv[1] || n < 1 || n > MAX_ITERATIONS)
    {
      say ("bad iteration count '%s' (1 to %ld)", argv[1], MAX_ITERATIONS);
      return -1;
    }
  return n;
}

static long long
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
print_result (const char *what, long n, long long elapsed_ns)
{
  say ("bench: %s %ld ns_per_iter %.1f total_ns %lld", what, n, (double) elapsed_ns / (double) n,
       elapsed_ns);
}

/* System calls the filter does not send to the supervisor: they take the
 * filter's constant-action path (or none at all without it), which is what
 * "untraced calls cost nothing measurable" is about.  getpid goes through
 * the system call (glibc does not cache it); the read is on fd > 2, which
 * the filter does not look at (only write/writev are).  Prints the result
 * as WHAT; returns TESTPROG_OK or TESTPROG_FAILED (the failing call
 * reported). */
static int
syscall_loop (const char *what, long n)
{
  struct stat st;
  char byte;
  long long start;
  int fd = open ("/dev/zero", O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    {
      report ("open /dev/zero", -1);
      return TESTPROG_FAILED;
    }
  start = now_ns ();
  for (long i = 0; i < n; i++)
    {
      if (getpid () <= 0 || stat ("/", &st) < 0 || read (fd, &byte, 1) != 1)
        {
          report ("getpid/stat/read", -1);
          close (fd);
          return TESTPROG_FAILED;
        }
    }
  print_result (what, n, now_ns () - start);
  close (fd);
  return TESTPROG_OK;
}

int
behaviour_bench_syscalls (int argc, char **argv)
{
  long n = iterations (argc, argv, DEFAULT_SYSCALL_ITERATIONS);

  return n < 0 ? TESTPROG_FAILED : syscall_loop ("syscalls", n);
}

/* What a seccomp filter costs the calls it does not select, measured in
 * one boot so that the noise between boots (several percent under TCG)
 * does not drown it: children of this process run syscall_loop () with no
 * filter, with a one-instruction filter that allows everything (the
 * kernel's fixed cost of any filter), and with the supervisor's own filter
 * (filter_build (), installed without a listener: the loop makes none of
 * the calls it selects).  ROUNDS rounds, the variants' order rotating.
 * Run it in a guest without the supervisor (airlock.test=unsupervised):
 * under the supervisor every child also carries the supervisor's filter.
 *
 *   bench-filter [ITERATIONS [ROUNDS]]
 *   → "bench: filter-none N ns_per_iter X …", "filter-constant", "filter-airlock" */
enum filter_variant { FILTER_NONE, FILTER_CONSTANT, FILTER_AIRLOCK, N_FILTER_VARIANTS };

static const char *const filter_variant_names[N_FILTER_VARIANTS] = {
  "filter-none", "filter-constant", "filter-airlock",
};

static int
install_variant (enum filter_variant v)
{
  struct sock_filter allow[] = { BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
  struct sock_filter insns[128];
  struct sock_fprog prog = { .len = 1, .filter = allow };
  size_t len;
  int r;

  if (v == FILTER_NONE)
    return 0;
  if (v == FILTER_AIRLOCK)
    {
      /* The filter that runs beside the kernel-hook recorder. */
      r = filter_build (insns, sizeof insns / sizeof insns[0], true, &len);
      if (r < 0)
        {
          report_raw ("filter_build", r);
          return -1;
        }
      prog.len = (unsigned short) len;
      prog.filter = insns;
    }
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    {
      report ("prctl PR_SET_NO_NEW_PRIVS", -1);
      return -1;
    }
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
    {
      report ("seccomp SET_MODE_FILTER", -1);
      return -1;
    }
  return 0;
}

int
behaviour_bench_filter (int argc, char **argv)
{
  long n = iterations (argc, argv, DEFAULT_SYSCALL_ITERATIONS);
  long rounds = argc > 2 ? iterations (argc - 1, argv + 1, 1) : 1;

  if (n < 0 || rounds < 0)
    return TESTPROG_FAILED;
  for (long r = 0; r < rounds; r++)
    for (int k = 0; k < N_FILTER_VARIANTS; k++)
      {
        enum filter_variant v = (enum filter_variant) ((k + r) % N_FILTER_VARIANTS);
        int status = 0;
        pid_t pid = fork ();

        if (pid < 0)
          {
            report ("fork", -1);
            return TESTPROG_FAILED;
          }
        if (pid == 0)
          _exit (install_variant (v) < 0 ? TESTPROG_FAILED
                                         : syscall_loop (filter_variant_names[v], n));
        if (waitpid (pid, &status, 0) < 0 || !WIFEXITED (status)
            || WEXITSTATUS (status) != TESTPROG_OK)
          {
            say ("%s: the child failed (wait status 0x%x)", filter_variant_names[v], status);
            return TESTPROG_FAILED;
          }
      }
  return TESTPROG_OK;
}

/* One UDP socket, @n calls of @call to @addr:9, timed; prints the time
 * and how the calls ended (the numbers are only comparable when the
 * supervised and the bare runs failed, or not, alike).  The number of
 * calls that failed, or -1 when there was no socket. */
static long
time_udp_calls (const char *what, long n, const char *addr,
                int (*call) (int fd, const struct sockaddr *sa, socklen_t len))
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, addr, 9);
  long long start;
  long failed = 0;
  int last_errno = 0;
  int fd = socket (AF_INET, SOCK_DGRAM, 0);

  if (fd < 0)
    {
      report ("socket", -1);
      return -1;
    }
  start = now_ns ();
  for (long i = 0; i < n; i++)
    if (call (fd, (struct sockaddr *) &sa, len) < 0)
      {
        failed++;
        last_errno = errno;
      }
  print_result (what, n, now_ns () - start);
  say ("%ld of %ld failed, the last with errno %d (%s)", failed, n, last_errno,
       last_errno && strerrorname_np (last_errno) ? strerrorname_np (last_errno) : "-");
  close (fd);
  return failed;
}

static int
connect_once (int fd, const struct sockaddr *sa, socklen_t len)
{
  return connect (fd, sa, len);
}

static int
sendto_once (int fd, const struct sockaddr *sa, socklen_t len)
{
  return sendto (fd, "x", 1, 0, sa, len) == 1 ? 0 : -1;
}

/* A traced call end to end: each connect of a UDP socket is recorded at
 * the socket's connect hook, its return at the call's exit (without the
 * kernel-hook recorder: notified, recorded, emulated by the supervisor and
 * answered).  The guest has no route to 192.0.2.1, so the call
 * itself fails fast (ENETUNREACH) with or without the supervisor. */
int
behaviour_bench_connect (int argc, char **argv)
{
  long n = iterations (argc, argv, DEFAULT_CONNECT_ITERATIONS);

  if (n < 0 || time_udp_calls ("connect", n, "192.0.2.1", connect_once) < 0)
    return TESTPROG_FAILED;
  return TESTPROG_OK;
}

/* A send with a destination end to end: each sendto of one byte from a UDP
 * socket to 127.0.0.1:9 is recorded at the socket's send hook, its return
 * at the call's exit (without the kernel-hook recorder: notified, recorded,
 * sent by the supervisor from its copy and answered).  To loopback, where a
 * datagram to a closed port is dropped without blocking and an unconnected
 * socket hears no ICMP error.  Every send must go out. */
int
behaviour_bench_sendto (int argc, char **argv)
{
  long n = iterations (argc, argv, DEFAULT_SENDTO_ITERATIONS);

  if (n < 0 || time_udp_calls ("sendto", n, "127.0.0.1", sendto_once) != 0)
    return TESTPROG_FAILED;
  return TESTPROG_OK;
}

/* write(2) on fd > 2 goes to the supervisor (it may be a socket); on a
 * file it continues unrecorded.  This is the price of that round trip. */
int
behaviour_bench_write (int argc, char **argv)
{
  long n = iterations (argc, argv, DEFAULT_WRITE_ITERATIONS);
  const char *path = "/tmp/bench-write";
  long long start;
  int fd;

  if (n < 0)
    return TESTPROG_FAILED;
  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      report ("open /tmp/bench-write", -1);
      return TESTPROG_FAILED;
    }
  start = now_ns ();
  for (long i = 0; i < n; i++)
    if (write (fd, "x", 1) != 1)
      {
        report ("write", -1);
        close (fd);
        return TESTPROG_FAILED;
      }
  print_result ("write", n, now_ns () - start);
  close (fd);
  unlink (path);
  return TESTPROG_OK;
}

/* bench/clock's CPU-bound workload: ROUNDS (default 10) of a million
 * xorshift steps, no system call inside.  Under the warped clock the
 * guest's clock counts instructions, so its own timing says nothing of
 * the cost: bench/clock times it from the host (the workload's start and
 * exit frames).  Prints the guest's CLOCK_MONOTONIC view all the same, and
 * the state, so the loop cannot be optimised away. */
int
behaviour_bench_cpu (int argc, char **argv)
{
  long rounds = iterations (argc, argv, 10);
  unsigned long long x = 88172645463325252ull;
  long long start;

  if (rounds < 0)
    return TESTPROG_FAILED;
  start = now_ns ();
  for (long r = 0; r < rounds; r++)
    for (int i = 0; i < 1000000; i++)
      {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile ("" : "+r" (x));
      }
  print_result ("cpu", rounds, now_ns () - start);
  say ("state %llx", x);
  return TESTPROG_OK;
}
