/* AArch32 code for the arm64 guest's aarch32 behaviour: a socket and a
 * connect through the 32-bit ARM system-call ABI (svc 0, number in r7).
 * The supervisor refuses every AArch32 system call but exit and
 * exit_group, write included, so this program answers with its exit
 * status: 0 when both calls failed, 1 when either got through.  Should
 * exit_group itself be refused, it dies on an undefined instruction
 * (SIGILL) instead of running on.  Built with arm-linux-gnueabihf-gcc
 * -static -nostdlib, in ARM (not Thumb) state so r7 is free. */

#define ARM_NR_SOCKET 281
#define ARM_NR_CONNECT 283
#define ARM_NR_EXIT_GROUP 248
#define AF_INET 2
#define SOCK_STREAM 1

static long
svc3 (long nr, long a, long b, long c)
{
  register long r7 __asm__ ("r7") = nr;
  register long r0 __asm__ ("r0") = a;
  register long r1 __asm__ ("r1") = b;
  register long r2 __asm__ ("r2") = c;

  __asm__ volatile ("svc 0" : "+r" (r0) : "r" (r7), "r" (r1), "r" (r2) : "memory");
  return r0;
}

/* sockaddr_in 192.0.2.1:9 */
static const unsigned char dest[16] = { AF_INET, 0, 0, 9, 192, 0, 2, 1 };

void _start (void) __attribute__ ((noreturn));

void
_start (void)
{
  long s = svc3 (ARM_NR_SOCKET, AF_INET, SOCK_STREAM, 0);
  long c = svc3 (ARM_NR_CONNECT, s >= 0 ? s : 3, (long) dest, sizeof dest);

  svc3 (ARM_NR_EXIT_GROUP, s < 0 && c < 0 ? 0 : 1, 0, 0);
  __asm__ volatile ("udf #0");
  for (;;)
    ;
}
