/* Hostile techniques 4-5: the destination rewritten while the recorder
 * reads it (time of check to time of use).  With the kernel-hook recorder
 * the connect is recorded at the kernel's socket_connect hook, on the
 * kernel's own copy of the address, which is the copy it connects to; under
 * the seccomp fallback the supervisor performs an inet connect itself with
 * the bytes it recorded (EMULATE).  Either way, whatever the flipping does,
 * the peer recorded is the peer used, and the host's capture holds no flow
 * that no record explains.  A recorder that read the workload's memory and
 * let the kernel read it again would leave flows to an address it did not
 * record. */
#define _GNU_SOURCE

#include "testprog.h"
#include "techniques.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 24

/* Connects ROUNDS times to *@sa (TCP: the SYN goes to whatever peer the
 * connect used, so the capture shows it). */
static void
connect_rounds (const struct sockaddr_in *sa)
{
  for (int i = 0; i < ROUNDS; i++)
    {
      int fd = socket (AF_INET, SOCK_STREAM, 0);

      if (fd < 0)
        {
          report ("socket", -1);
          return;
        }
      (void) connect (fd, (const struct sockaddr *) sa, sizeof *sa);
      close (fd);
    }
  say ("%d connects made while the address flipped", ROUNDS);
}

/* Flips the address between the two @n networks until *@stop. */
static void
flip_until (struct sockaddr_in *sa, unsigned n, volatile int *stop)
{
  char a[16], b[16];
  struct in_addr x, y;

  inet_pton (AF_INET, hostile_net2 (a, n), &x);
  inet_pton (AF_INET, hostile_net3 (b, n), &y);
  while (!*stop)
    {
      __atomic_store_n (&sa->sin_addr.s_addr, x.s_addr, __ATOMIC_RELAXED);
      __atomic_store_n (&sa->sin_addr.s_addr, y.s_addr, __ATOMIC_RELAXED);
    }
}

/* 4.  A second thread flips the sockaddr between 198.51.100.4 and
 * 203.0.113.4 (port 7004) while the first connects. */
static struct sockaddr_in thread_sa;
static volatile int thread_stop;

static void *
flipper (void *arg)
{
  flip_until (&thread_sa, 4, &thread_stop);
  return NULL;
}

int
technique_toctou_thread (int argc, char **argv)
{
  pthread_t t;
  char ip[16];

  make_sin (&thread_sa, hostile_net2 (ip, 4), 7004);
  if (pthread_create (&t, NULL, flipper, NULL) != 0)
    {
      say ("cannot start the flipping thread");
      return TESTPROG_FAILED;
    }
  connect_rounds (&thread_sa);
  thread_stop = 1;
  pthread_join (t, NULL);
  return TESTPROG_OK;
}

/* 5.  The same from another process, through a shared mapping
 * (198.51.100.5 / 203.0.113.5, port 7005). */
struct shared_page {
  struct sockaddr_in sa;
  volatile int stop;
};

int
technique_toctou_shared (int argc, char **argv)
{
  struct shared_page *p = mmap (NULL, sizeof *p, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char ip[16];
  pid_t child;
  int status;

  if (p == MAP_FAILED)
    {
      report ("mmap MAP_SHARED", -1);
      return TESTPROG_FAILED;
    }
  make_sin (&p->sa, hostile_net2 (ip, 5), 7005);
  fflush (stdout);
  child = fork ();
  if (child == 0)
    {
      flip_until (&p->sa, 5, &p->stop);
      _exit (0);
    }
  if (child < 0)
    return TESTPROG_FAILED;
  connect_rounds (&p->sa);
  p->stop = 1;
  waitpid (child, &status, 0);
  return TESTPROG_OK;
}
