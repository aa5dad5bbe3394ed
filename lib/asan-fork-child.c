/* Sanitized builds only: a heap for the child of a fork, from fork to exec.
 *
 * meson adds this file to every program that links the library when
 * b_sanitize has 'address' (lib/meson.build); nothing ships it.
 *
 * Why: libvirt starts QEMU, and libguestfs its appliance, by fork() from one
 * of our threads, and the child allocates before it execs (libvirt's
 * qemuProcessHook: the namespace, labels, paths).  glibc's malloc takes its
 * arenas' locks around a fork; the AddressSanitizer runtime of gcc 12 does
 * not (libasan.so.8 intercepts vfork, not fork).  A child forked while
 * another thread held one of the sanitizer allocator's locks — refilling a
 * size class, draining its quarantine, storing an allocation stack — waits
 * for it for ever, since the thread that would release it is not in the
 * child.  Seen twice in CI: sinkhole-protocols hung for its 1800 s in a gate
 * of both arches; gdb on the child: virDomainCreateXML → … →
 * qemuDomainUnshareNamespace → g_strdup_printf → malloc, spinning.
 * tests/unit/test-asan-fork.c shows it within a second without this file.
 *
 * What: a pthread_atfork child handler marks the child, and from then on
 * this file's malloc family serves it from fresh anonymous mappings by a
 * bump pointer; free is a no-op (the child lives until exec or _exit, and
 * its memory with it).  Before any fork, and in the parent always, each call
 * goes straight to ASan's own allocator (its __interceptor_ entry points), so
 * the parent's heap is checked exactly as before.  These definitions are in
 * the program itself, so the dynamic linker binds every library's malloc to
 * them ahead of libasan's.  The sanitizers do not check what a forked child
 * allocates before exec; nothing of ours runs there. */

#define _GNU_SOURCE

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *__interceptor_malloc (size_t size);
void __interceptor_free (void *ptr);
void *__interceptor_calloc (size_t n, size_t size);
void *__interceptor_realloc (void *ptr, size_t size);
void *__interceptor_reallocarray (void *ptr, size_t n, size_t size);
void *__interceptor_memalign (size_t align, size_t size);
void *__interceptor_aligned_alloc (size_t align, size_t size);
int __interceptor_posix_memalign (void **out, size_t align, size_t size);
void *__interceptor_valloc (size_t size);
void *__interceptor_pvalloc (size_t size);
size_t __interceptor_malloc_usable_size (void *ptr);
size_t __sanitizer_get_allocated_size (const void *ptr);

/* Set in the child only, by the atfork handler: one thread, so no lock. */
static int in_child;

/* The child's mappings, to tell its blocks from the parent's in realloc. */
#define MAX_MAPS 256
static struct { uintptr_t start, end; } maps[MAX_MAPS];
static size_t n_maps;
static uintptr_t next, limit;

enum { HEADER = 16, CHUNK = 1 << 20 };

/* The maps are empty in a first child (the parent never fills them) and
 * kept in a grandchild: libvirt's daemonizing child forks again, and the
 * grandchild may grow a block its parent made. */
static void
mark_child (void)
{
  in_child = 1;
}

__attribute__ ((constructor)) static void
install (void)
{
  pthread_atfork (NULL, NULL, mark_child);
}

/* SIZE bytes aligned to ALIGN (a power of two, at least 16), with the
 * size in the 16 bytes before them. */
static void *
child_alloc (size_t size, size_t align)
{
  size_t need;
  uintptr_t p;

  if (align < HEADER)
    align = HEADER;
  if (size > SIZE_MAX / 2 || align > SIZE_MAX / 4)
    {
      errno = ENOMEM;
      return NULL;
    }
  need = size + HEADER + align;
  if (next == 0 || limit - next < need)
    {
      size_t len = need > CHUNK ? need : CHUNK;
      void *map;

      if (n_maps == MAX_MAPS)
        {
          errno = ENOMEM;
          return NULL;
        }
      map = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map == MAP_FAILED)
        {
          errno = ENOMEM;
          return NULL;
        }
      next = (uintptr_t) map;
      limit = next + len;
      maps[n_maps].start = next;
      maps[n_maps].end = limit;
      n_maps++;
    }
  p = (next + HEADER + align - 1) & ~(uintptr_t) (align - 1);
  ((size_t *) p)[-1] = size;
  next = p + size;
  return (void *) p;
}

/* The size of PTR's block: from its header when the child made it, from
 * the sanitizer's chunk when the parent did. */
static size_t
child_size_of (void *ptr)
{
  uintptr_t p = (uintptr_t) ptr;

  for (size_t i = 0; i < n_maps; i++)
    if (p >= maps[i].start && p < maps[i].end)
      return ((size_t *) p)[-1];
  return __sanitizer_get_allocated_size (ptr);
}

static void *
child_realloc (void *ptr, size_t size)
{
  void *out = child_alloc (size, 0);

  if (out != NULL && ptr != NULL)
    {
      size_t old = child_size_of (ptr);

      memcpy (out, ptr, old < size ? old : size);
    }
  return out;
}

static int
mul_overflows (size_t n, size_t size, size_t *out)
{
  if (__builtin_mul_overflow (n, size, out))
    {
      errno = ENOMEM;
      return 1;
    }
  return 0;
}

void *
malloc (size_t size)
{
  return in_child ? child_alloc (size, 0) : __interceptor_malloc (size);
}

void
free (void *ptr)
{
  if (!in_child)
    __interceptor_free (ptr);
}

void *
calloc (size_t n, size_t size)
{
  size_t total;

  if (!in_child)
    return __interceptor_calloc (n, size);
  if (mul_overflows (n, size, &total))
    return NULL;
  return child_alloc (total, 0); /* fresh mappings are zero */
}

void *
realloc (void *ptr, size_t size)
{
  return in_child ? child_realloc (ptr, size) : __interceptor_realloc (ptr, size);
}

void *
reallocarray (void *ptr, size_t n, size_t size)
{
  size_t total;

  if (!in_child)
    return __interceptor_reallocarray (ptr, n, size);
  if (mul_overflows (n, size, &total))
    return NULL;
  return child_realloc (ptr, total);
}

void *
memalign (size_t align, size_t size)
{
  return in_child ? child_alloc (size, align) : __interceptor_memalign (align, size);
}

void *
aligned_alloc (size_t align, size_t size)
{
  return in_child ? child_alloc (size, align) : __interceptor_aligned_alloc (align, size);
}

int
posix_memalign (void **out, size_t align, size_t size)
{
  if (!in_child)
    return __interceptor_posix_memalign (out, align, size);
  *out = child_alloc (size, align);
  return *out == NULL ? ENOMEM : 0;
}

void *
valloc (size_t size)
{
  return in_child ? child_alloc (size, (size_t) getpagesize ()) : __interceptor_valloc (size);
}

void *
pvalloc (size_t size)
{
  size_t page = (size_t) getpagesize ();

  if (!in_child)
    return __interceptor_pvalloc (size);
  return child_alloc ((size + page - 1) & ~(page - 1), page);
}

size_t
malloc_usable_size (void *ptr)
{
  if (!in_child)
    return __interceptor_malloc_usable_size (ptr);
  return ptr == NULL ? 0 : child_size_of (ptr);
}
