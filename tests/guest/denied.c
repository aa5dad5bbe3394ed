/* The denied classes: each behaviour makes the call the supervisor must
 * refuse, and succeeds (exit 0) when the call fails.  A call that succeeds
 * is a hole: the behaviour then goes on to use it for egress where it can,
 * so the host sees what got through, and exits 1. */
#define _GNU_SOURCE

#include "testprog.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <linux/vm_sockets.h>
#include <net/ethernet.h>
#include <netinet/ip_icmp.h>
#include <netpacket/packet.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int
not_on_this_arch (void)
{
  say ("not a behaviour of this arch");
  return TESTPROG_SKIP;
}

/* ---- foreign system-call ABIs -------------------------------------------- */

#if defined(__x86_64__)
/* i386 system calls from a 64-bit process: int $0x80 takes the i386 table
 * with 32-bit arguments (so the memory they point to must lie below 4 GiB:
 * this static, non-PIE binary's data does) and clobbers r8-r11. */
static long
int80 (long nr, long a, long b, long c)
{
  long r;

  __asm__ volatile ("int $0x80"
                    : "=a" (r)
                    : "a" (nr), "b" (a), "c" (b), "d" (c)
                    : "memory", "r8", "r9", "r10", "r11");
  return r;
}

#define I386_NR_SOCKETCALL 102
#define I386_SYS_SOCKET 1
#define I386_NR_SOCKET 359
#define I386_NR_CONNECT 362
#define X32_SYSCALL_BIT 0x40000000
#define X32_NR_SOCKET 41
#define X32_NR_CONNECT 42

static uint32_t socketcall_args[3] = { AF_INET, SOCK_STREAM, 0 };
static struct sockaddr_in i386_dest;
#endif

int
behaviour_i386_int80 (int argc, char **argv)
{
#if defined(__x86_64__)
  long r1, r2, r3;

  make_sin (&i386_dest, "192.0.2.1", 9);
  r1 = report_raw ("i386 socketcall(SYS_SOCKET)",
                   int80 (I386_NR_SOCKETCALL, I386_SYS_SOCKET, (long) (uintptr_t) socketcall_args, 0));
  r2 = report_raw ("i386 socket", int80 (I386_NR_SOCKET, AF_INET, SOCK_STREAM, 0));
  /* Connect on whichever socket we got, or on fd 3 if none (the call
   * itself is what must be denied). */
  r3 = report_raw ("i386 connect", int80 (I386_NR_CONNECT, r2 >= 0 ? r2 : (r1 >= 0 ? r1 : 3),
                                          (long) (uintptr_t) &i386_dest, sizeof i386_dest));
  return r1 < 0 && r2 < 0 && r3 < 0 ? TESTPROG_OK : TESTPROG_FAILED;
#else
  return not_on_this_arch ();
#endif
}

int
behaviour_x32 (int argc, char **argv)
{
#if defined(__x86_64__)
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 9);
  long r1 = report_raw ("x32 socket", syscall (X32_SYSCALL_BIT | X32_NR_SOCKET, AF_INET, SOCK_STREAM, 0) < 0
                                        ? -errno : 0);
  long r2 = report_raw ("x32 connect", syscall (X32_SYSCALL_BIT | X32_NR_CONNECT, 3, &sa, len) < 0
                                         ? -errno : 0);

  return r1 < 0 && r2 < 0 ? TESTPROG_OK : TESTPROG_FAILED;
#else
  return not_on_this_arch ();
#endif
}

/* AArch32 code cannot print: every one of its system calls but exit is a
 * foreign-ABI call the supervisor refuses.  So /bin/testprog-arm32 answers
 * with its exit status: 0 when its socket and connect both failed, 1 when
 * either got through (SIGILL if even its exit was refused). */
int
behaviour_aarch32 (int argc, char **argv)
{
#if defined(__aarch64__)
  pid_t pid;
  int status;
  int pipefd[2];
  int exec_errno = 0;

  /* The child reports a failed exec through a close-on-exec pipe. */
  if (pipe2 (pipefd, O_CLOEXEC) < 0)
    return TESTPROG_FAILED;
  pid = fork ();
  if (pid == 0)
    {
      char *const exec_argv[] = { "testprog-arm32", NULL };
      char *const exec_envp[] = { NULL };

      execve ("/bin/testprog-arm32", exec_argv, exec_envp);
      exec_errno = errno;
      if (write (pipefd[1], &exec_errno, sizeof exec_errno) < 0)
        _exit (126);
      _exit (127);
    }
  close (pipefd[1]);
  if (pid < 0 || read (pipefd[0], &exec_errno, sizeof exec_errno) < 0)
    return TESTPROG_FAILED;
  if (waitpid (pid, &status, 0) != pid)
    return TESTPROG_FAILED;
  if (exec_errno == ENOEXEC)
    {
      say ("this CPU or kernel runs no AArch32 code (execve: ENOEXEC)");
      return TESTPROG_SKIP;
    }
  if (exec_errno != 0)
    {
      errno = exec_errno;
      report ("execve /bin/testprog-arm32", -1);
      return TESTPROG_FAILED;
    }
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    {
      say ("AArch32 socket and connect both failed");
      return TESTPROG_OK;
    }
  if (WIFEXITED (status))
    say ("testprog-arm32 exited with status %d: an AArch32 call got through", WEXITSTATUS (status));
  else if (WIFSIGNALED (status) && WTERMSIG (status) == SIGILL)
    say ("testprog-arm32 could not exit: its exit_group was refused");
  else
    say ("testprog-arm32 ended with wait status 0x%x", status);
  return TESTPROG_FAILED;
#else
  return not_on_this_arch ();
#endif
}

/* ---- io_uring ------------------------------------------------------------- */

/* Setup must be refused.  If it is not, submit an IORING_OP_CONNECT through
 * the ring (a connect the seccomp filter never sees, which is why io_uring
 * is denied at all), so the hole shows up as egress. */
static void
io_uring_connect (int ring, struct io_uring_params *p)
{
  size_t sq_size = p->sq_off.array + p->sq_entries * sizeof (uint32_t);
  size_t sqes_size = p->sq_entries * sizeof (struct io_uring_sqe);
  uint8_t *sq = mmap (NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                      IORING_OFF_SQ_RING);
  struct io_uring_sqe *sqes = mmap (NULL, sqes_size, PROT_READ | PROT_WRITE,
                                    MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQES);
  static struct sockaddr_in sa;
  uint32_t *tail, *array;
  int fd = socket (AF_INET, SOCK_STREAM, 0);

  if (sq == MAP_FAILED || sqes == MAP_FAILED || fd < 0)
    {
      report ("io_uring ring setup", -1);
      return;
    }
  make_sin (&sa, "192.0.2.1", 9);
  memset (&sqes[0], 0, sizeof sqes[0]);
  sqes[0].opcode = IORING_OP_CONNECT;
  sqes[0].fd = fd;
  sqes[0].addr = (uint64_t) (uintptr_t) &sa;
  sqes[0].off = sizeof sa;
  tail = (uint32_t *) (sq + p->sq_off.tail);
  array = (uint32_t *) (sq + p->sq_off.array);
  array[*tail & *(uint32_t *) (sq + p->sq_off.ring_mask)] = 0;
  __atomic_store_n (tail, *tail + 1, __ATOMIC_RELEASE);
  report ("io_uring_enter (IORING_OP_CONNECT)",
          syscall (SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
}

int
behaviour_io_uring (int argc, char **argv)
{
  struct io_uring_params params;
  long ring, enter, reg;

  memset (&params, 0, sizeof params);
  ring = report ("io_uring_setup", syscall (SYS_io_uring_setup, 8, &params));
  if (ring >= 0)
    {
      io_uring_connect ((int) ring, &params);
      return TESTPROG_FAILED;
    }
  /* The other two entry points are denied on their own, whatever fd they
   * name. */
  enter = report ("io_uring_enter", syscall (SYS_io_uring_enter, 3, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0));
  reg = report ("io_uring_register", syscall (SYS_io_uring_register, 3, IORING_REGISTER_PROBE, NULL, 0));
  return enter < 0 && reg < 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* ---- sockets of denied kinds ---------------------------------------------- */

int
behaviour_raw_socket (int argc, char **argv)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 0);
  struct icmphdr echo = { .type = ICMP_ECHO };
  int fd = report ("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", socket (AF_INET, SOCK_RAW, IPPROTO_ICMP));

  if (fd < 0)
    return TESTPROG_OK;
  report ("sendto ICMP echo", sendto (fd, &echo, sizeof echo, 0, (struct sockaddr *) &sa, len));
  return TESTPROG_FAILED;
}

int
behaviour_packet_socket (int argc, char **argv)
{
  int fd = report ("socket(AF_PACKET, SOCK_RAW, ETH_P_ALL)", socket (AF_PACKET, SOCK_RAW, htons (ETH_P_ALL)));

  if (fd < 0)
    return TESTPROG_OK;
  return TESTPROG_FAILED;
}

int
behaviour_vsock (int argc, char **argv)
{
  struct sockaddr_vm sa = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_HOST, .svm_port = 1024 };
  int fd = report ("socket(AF_VSOCK, SOCK_STREAM, 0)", socket (AF_VSOCK, SOCK_STREAM, 0));

  if (fd < 0)
    return TESTPROG_OK;
  report ("connect vsock:2:1024", connect (fd, (struct sockaddr *) &sa, sizeof sa));
  return TESTPROG_FAILED;
}

int
behaviour_sctp (int argc, char **argv)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 9);
  int fd = report ("socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP)", socket (AF_INET, SOCK_STREAM, IPPROTO_SCTP));

  if (fd < 0)
    return TESTPROG_OK;
  report ("connect", connect (fd, (struct sockaddr *) &sa, len));
  return TESTPROG_FAILED;
}

/* ---- ways around the supervisor ------------------------------------------- */

int
behaviour_ptrace_denied (int argc, char **argv)
{
  long traceme, attach;
  int status;
  pid_t child;

  traceme = report ("ptrace(PTRACE_TRACEME)", ptrace (PTRACE_TRACEME, 0, NULL, NULL));
  fflush (stdout);
  child = fork ();
  if (child == 0)
    {
      for (;;)
        pause ();
    }
  if (child < 0)
    return TESTPROG_FAILED;
  attach = report ("ptrace(PTRACE_ATTACH, child)", ptrace (PTRACE_ATTACH, child, NULL, NULL));
  kill (child, SIGKILL);
  waitpid (child, &status, 0);
  return traceme < 0 && attach < 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* A listener would let the workload answer its own system calls (and
 * stacked filters' notifications go to the innermost listener). */
int
behaviour_seccomp_listener (int argc, char **argv)
{
  struct sock_filter allow = BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = { .len = 1, .filter = &allow };
  long r;

  report ("prctl(PR_SET_NO_NEW_PRIVS)", prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  r = report ("seccomp(SET_MODE_FILTER, NEW_LISTENER)",
              syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
  return r < 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* CLONE_UNTRACED would start a process the tracer cannot follow.  The raw
 * call, so no libc wrapper adds flags or a stack. */
int
behaviour_clone_untraced (int argc, char **argv)
{
  long pid;
  int status;

  fflush (stdout);
  pid = syscall (SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0)
    _exit (0);
  report ("clone(CLONE_UNTRACED|SIGCHLD)", pid);
  if (pid < 0)
    return TESTPROG_OK;
  waitpid ((pid_t) pid, &status, 0);
  return TESTPROG_FAILED;
}
