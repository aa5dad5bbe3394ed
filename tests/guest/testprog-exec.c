/* "Another binary" for the tree behaviour: exec'd by testprog, it makes
 * one connect to 192.0.2.1:PORT (argv[1]) and exits 0 when the calls were
 * made.  Its records must name this exe, not testprog.  Built without libc
 * (-nostdlib: raw system calls, its own _start) so it adds a few kilobytes
 * to the initramfs rather than another static glibc. */
#include <sys/socket.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
static long
sys3 (long nr, long a, long b, long c)
{
  long r;

  __asm__ volatile ("syscall" : "=a" (r) : "a" (nr), "D" (a), "S" (b), "d" (c) : "rcx", "r11", "memory");
  return r;
}

__asm__ (".globl _start\n"
         "_start:\n"
         "  xor %rbp, %rbp\n"
         "  mov %rsp, %rdi\n"
         "  and $-16, %rsp\n"
         "  call start_c\n"
         "  hlt\n");
#elif defined(__aarch64__)
static long
sys3 (long nr, long a, long b, long c)
{
  register long x8 __asm__ ("x8") = nr;
  register long x0 __asm__ ("x0") = a;
  register long x1 __asm__ ("x1") = b;
  register long x2 __asm__ ("x2") = c;

  __asm__ volatile ("svc 0" : "+r" (x0) : "r" (x8), "r" (x1), "r" (x2) : "memory");
  return x0;
}

__asm__ (".globl _start\n"
         "_start:\n"
         "  mov x29, #0\n"
         "  mov x30, #0\n"
         "  mov x0, sp\n"
         "  bl start_c\n"
         "  brk #0\n");
#else
#error "testprog-exec is built for x86_64 and aarch64 guests"
#endif

static unsigned long
length (const char *s)
{
  unsigned long n = 0;

  while (s[n])
    n++;
  return n;
}

static void
put (const char *s)
{
  sys3 (SYS_write, 1, (long) s, (long) length (s));
}

/* Appends the decimal form of @v (may be negative) to @out at @pos. */
static unsigned long
append_long (char *out, unsigned long pos, long v)
{
  char digits[24];
  int n = 0;
  unsigned long u = v < 0 ? (unsigned long) -v : (unsigned long) v;

  if (v < 0)
    out[pos++] = '-';
  do
    digits[n++] = '0' + u % 10;
  while ((u /= 10) != 0);
  while (n > 0)
    out[pos++] = digits[--n];
  return pos;
}

static void
say_result (const char *what, long r)
{
  char line[128];
  unsigned long pos = 0;
  const char *prefix = "testprog: testprog-exec: ";

  for (const char *p = prefix; *p; p++)
    line[pos++] = *p;
  for (const char *p = what; *p && pos < 80; p++)
    line[pos++] = *p;
  line[pos++] = ':';
  line[pos++] = ' ';
  pos = append_long (line, pos, r);
  line[pos++] = '\n';
  line[pos] = '\0';
  put (line);
}

__attribute__ ((used, noreturn)) void start_c (long *sp);

void
start_c (long *sp)
{
  long argc = sp[0];
  char **argv = (char **) (sp + 1);
  unsigned port = 0;
  unsigned char sa[16] = { 0 };
  long fd, r;

  if (argc > 1)
    for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
      port = port * 10 + (unsigned) (*p - '0');
  /* sockaddr_in for 192.0.2.1:port, family little-endian, port big-endian. */
  sa[0] = AF_INET;
  sa[2] = port >> 8;
  sa[3] = port & 0xff;
  sa[4] = 192;
  sa[5] = 0;
  sa[6] = 2;
  sa[7] = 1;

  say_result ("pid", sys3 (SYS_getpid, 0, 0, 0));
  fd = sys3 (SYS_socket, AF_INET, SOCK_STREAM, 0);
  say_result ("socket", fd);
  r = fd >= 0 ? sys3 (SYS_connect, fd, (long) sa, sizeof sa) : fd;
  say_result ("connect (result or -errno)", r);
  sys3 (SYS_exit_group, fd >= 0 ? 0 : 1, 0, 0);
  for (;;)
    ;
}
