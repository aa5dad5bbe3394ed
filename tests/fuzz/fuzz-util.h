/* Helpers shared by the libFuzzer harnesses: an invariant check that cannot
 * be compiled out, a deterministic PRNG seeded from the input (so a crash
 * replays with the same read splits), the check that a string is safe to
 * print, and GLib warnings made fatal (and the LLVMFuzzerInitialize of a
 * harness that sets up nothing else). */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

/* Not g_assert(): that can be compiled out, and a fuzzer that cannot fail
 * proves nothing. */
#define fuzz_check(cond) \
  do { \
    if (!(cond)) \
      { \
        fprintf (stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
        abort (); \
      } \
  } while (0)

static inline guint64
fuzz_splitmix64 (guint64 *state)
{
  guint64 z = (*state += 0x9e3779b97f4a7c15ull);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* How a harness of a stream decoder splits its input into reads: all at
 * once, byte by byte (up to FUZZ_BYTEWISE_MAX: one read per byte of a
 * 16 KiB input would make every run slow for little more coverage), or
 * reads of random lengths (FUZZ_FEED_TIMED too; the harness also moves
 * its clock between them).  The verdicts must not depend on it. */
#define FUZZ_BYTEWISE_MAX 2048

typedef enum {
  FUZZ_FEED_WHOLE,
  FUZZ_FEED_BYTES,
  FUZZ_FEED_RANDOM,
  FUZZ_FEED_TIMED,
} FuzzFeed;

/* FNV-1a over the input: the PRNG seed. */
static inline guint64
fuzz_input_hash (const guint8 *data, gsize size)
{
  guint64 h = 0xcbf29ce484222325ull;

  for (gsize i = 0; i < size; i++)
    h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

/* The length of the next read of @feed at @pos of @size bytes (at most
 * what is left); random lengths come from @rng. */
static inline gsize
fuzz_feed_next (FuzzFeed feed, gsize pos, gsize size, guint64 *rng)
{
  gsize n;

  switch (feed)
    {
    case FUZZ_FEED_WHOLE:
      n = size;
      break;
    case FUZZ_FEED_BYTES:
      n = pos < FUZZ_BYTEWISE_MAX ? 1 : size - pos;
      break;
    case FUZZ_FEED_RANDOM:
    case FUZZ_FEED_TIMED:
    default:
      /* mostly short reads, sometimes empty, sometimes long */
      n = fuzz_splitmix64 (rng) % 4 == 0 ? fuzz_splitmix64 (rng) % 4096 : fuzz_splitmix64 (rng) % 24;
      break;
    }
  return MIN (n, size - pos);
}

/* Valid UTF-8 without control characters: what the escaping promises. */
static inline void
fuzz_check_safe_text (const char *text)
{
  fuzz_check (text != NULL);
  fuzz_check (g_utf8_validate (text, -1, NULL));
  for (const char *p = text; *p; p = g_utf8_next_char (p))
    fuzz_check (!g_unichar_iscntrl (g_utf8_get_char (p)));
}

static inline GLogWriterOutput
fuzz_log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                 gpointer user_data)
{
  GLogWriterOutput written = g_log_writer_standard_streams (level, fields, n_fields, user_data);

  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    abort ();
  return written;
}

/* A GLib warning or critical (an error set over another, a failed
 * g_return_if_fail) is a bug the run must stop at.  abort(), not GLib's own
 * fatal path: that may raise SIGTRAP, which libFuzzer does not catch, and
 * the input would be lost.  Call once, before anything logs. */
static inline void
fuzz_glib_warnings_abort (void)
{
  g_log_set_writer_func (fuzz_log_writer, NULL, NULL);
}

/* Defines LLVMFuzzerInitialize for a harness whose only setup is
 * fuzz_glib_warnings_abort().  A macro, not a function here: the harnesses
 * that set up more (fuzz-bundle's scratch directory) define their own. */
#define FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT() \
  int LLVMFuzzerInitialize (int *argc, char ***argv); \
  int \
  LLVMFuzzerInitialize (int *argc, char ***argv) \
  { \
    (void) argc; \
    (void) argv; \
    fuzz_glib_warnings_abort (); \
    return 0; \
  }
