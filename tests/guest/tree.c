/* A process tree, each member making one connect to its own port of
 * 192.0.2.1, so the host can check that each record names the process that
 * made it:
 *
 *   1001  a fork()ed child                (own pid, parent = this process)
 *   1002  a vfork()ed child               (own pid, parent = this process)
 *   1003  a thread (pthread_create)       (this pid, another thread id)
 *   1004  /bin/testprog-exec, fork+exec   (own pid, exe testprog-exec)
 *   1005  a double-forked daemon          (own pid, parent = the reaper)
 */
#define _GNU_SOURCE

#include "testprog.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int
connect_port (unsigned port)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", port);
  int fd;

  say ("pid %d ppid %d tid %d connects to port %u", getpid (), getppid (), gettid (), port);
  fd = connect_to (AF_INET, SOCK_STREAM, 0, (struct sockaddr *) &sa, len);
  return fd < 0 ? TESTPROG_FAILED : TESTPROG_OK;
}

static int
wait_child (pid_t pid, const char *what)
{
  int status;

  if (waitpid (pid, &status, 0) != pid)
    {
      report (what, -1);
      return TESTPROG_FAILED;
    }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      say ("%s: child ended with status 0x%x", what, status);
      return TESTPROG_FAILED;
    }
  return TESTPROG_OK;
}

static void *
thread_main (void *data)
{
  *(int *) data = connect_port (1003);
  return NULL;
}

int
behaviour_tree (int argc, char **argv)
{
  int failed = 0;
  pid_t pid;
  int pipefd[2];

  say ("main pid %d ppid %d", getpid (), getppid ());

  /* fork */
  pid = fork ();
  if (pid == 0)
    _exit (connect_port (1001));
  failed |= pid < 0 || wait_child (pid, "fork child");

  /* vfork: the child borrows our memory and stack until it exits, so it
   * only makes raw calls and leaves its results for us to print. */
  {
    volatile long vfork_socket = 0, vfork_connect = 0, vfork_errno = 0;
    volatile pid_t vfork_pid = 0;
    struct sockaddr_in sa;
    socklen_t len = make_sin (&sa, "192.0.2.1", 1002);

    pid = vfork ();
    if (pid == 0)
      {
        vfork_pid = syscall (SYS_getpid);
        vfork_socket = syscall (SYS_socket, AF_INET, SOCK_STREAM, 0);
        if (vfork_socket >= 0)
          {
            vfork_connect = syscall (SYS_connect, (int) vfork_socket, &sa, len);
            vfork_errno = vfork_connect < 0 ? errno : 0;
          }
        _exit (0);
      }
    failed |= pid < 0 || wait_child (pid, "vfork child");
    say ("vfork child pid %d: socket %ld, connect to port 1002 %ld (errno %ld)", (int) vfork_pid,
         (long) vfork_socket, (long) vfork_connect, (long) vfork_errno);
    failed |= vfork_socket < 0;
  }

  /* a thread (glibc tries clone3 first, which the supervisor denies, then
   * clone) */
  {
    pthread_t thread;
    int thread_result = TESTPROG_FAILED;
    int r = pthread_create (&thread, NULL, thread_main, &thread_result);

    if (r != 0)
      {
        errno = r;
        report ("pthread_create", -1);
        failed = 1;
      }
    else
      {
        pthread_join (thread, NULL);
        failed |= thread_result;
      }
  }

  /* exec of another binary */
  pid = fork ();
  if (pid == 0)
    {
      char *const exec_argv[] = { "testprog-exec", "1004", NULL };
      char *const exec_envp[] = { NULL };

      execve ("/bin/testprog-exec", exec_argv, exec_envp);
      report ("execve /bin/testprog-exec", -1);
      _exit (TESTPROG_FAILED);
    }
  failed |= pid < 0 || wait_child (pid, "exec child");

  /* a daemon: fork, setsid, fork again, the middle process exits; the
   * grandchild connects once it has been reparented, and tells us through
   * a pipe when it is done. */
  if (pipe (pipefd) < 0)
    return TESTPROG_FAILED;
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      pid_t middle = getpid ();

      close (pipefd[0]);
      setsid ();
      if (fork () == 0)
        {
          char result;

          while (getppid () == middle)
            usleep (1000);
          result = (char) connect_port (1005);
          if (write (pipefd[1], &result, 1) != 1)
            _exit (TESTPROG_FAILED);
          _exit (0);
        }
      _exit (0);
    }
  close (pipefd[1]);
  failed |= pid < 0 || wait_child (pid, "daemon's parent");
  {
    char result = TESTPROG_FAILED;

    if (read (pipefd[0], &result, 1) != 1)
      say ("the daemon never reported");
    failed |= result != TESTPROG_OK;
  }
  return failed ? TESTPROG_FAILED : TESTPROG_OK;
}

/* connect-exec: sixteen children, released at once, each connects (ports
 * 1100-1115) and at once execs another binary (testprog-exec, which
 * connects to 1199).  A connect is recorded at the kernel's hook and read
 * by PID 1 a little later, while execve stops at the supervisor first:
 * were a record read after its exec had gone through, it would name
 * testprog-exec for a connect testprog made — an image could have its
 * connects named after whatever binary a policy's exe= admits.  Each 11xx
 * record must name testprog (tests/vm/test-supervisor.c,
 * check_connect_exec); all at once on two CPUs give the race its room. */
#define CONNECT_EXEC_CHILDREN 16

int
behaviour_connect_exec (int argc, char **argv)
{
  pid_t pids[CONNECT_EXEC_CHILDREN];
  int go[2];
  int failed = 0;

  (void) argc;
  (void) argv;
  if (pipe (go) < 0)
    return report ("pipe", -1), TESTPROG_FAILED;
  fflush (stdout);
  for (unsigned i = 0; i < CONNECT_EXEC_CHILDREN; i++)
    {
      pids[i] = fork ();
      if (pids[i] == 0)
        {
          struct sockaddr_in sa;
          socklen_t len = make_sin (&sa, "192.0.2.1", 1100 + i);
          char *const exec_argv[] = { "testprog-exec", "1199", NULL };
          char *const exec_envp[] = { NULL };
          char byte;
          int fd = socket (AF_INET, SOCK_STREAM, 0);

          close (go[1]);
          if (fd < 0 || read (go[0], &byte, 1) != 0)
            _exit (TESTPROG_FAILED);
          close (go[0]);
          /* No route to 192.0.2.1: fails at once, and nothing in between. */
          (void) connect (fd, (struct sockaddr *) &sa, len);
          execve ("/bin/testprog-exec", exec_argv, exec_envp);
          _exit (TESTPROG_FAILED);
        }
      failed |= pids[i] < 0;
    }
  /* EOF on the pipe: every child goes. */
  close (go[0]);
  close (go[1]);
  for (unsigned i = 0; i < CONNECT_EXEC_CHILDREN; i++)
    failed |= pids[i] > 0 && wait_child (pids[i], "connect-exec child");
  say ("%u children connected, then exec'd testprog-exec", CONNECT_EXEC_CHILDREN);
  return failed ? TESTPROG_FAILED : TESTPROG_OK;
}
