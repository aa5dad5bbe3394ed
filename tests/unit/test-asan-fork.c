/* The check of lib/asan-fork-child.c (sanitized builds only): forks
 * while two threads allocate and free without pause; the child allocates,
 * reallocates a block of the parent's and frees, as libvirt's child does
 * before exec, and forks a grandchild that grows a block of the child's.
 * Without that file linked in, gcc 12's sanitizer runtime leaves a child
 * waiting for ever on a lock a churning thread held (on this machine
 * within the first 25 forks, in each of three tries), and meson's timeout
 * fails the test; with it, each child ends at once with its checks
 * passed. */

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKS 300

static gint stop;

static gpointer
churn (gpointer data)
{
  guint i = GPOINTER_TO_UINT (data);

  while (!g_atomic_int_get (&stop))
    {
      void *blocks[64];

      for (guint k = 0; k < G_N_ELEMENTS (blocks); k++)
        blocks[k] = malloc (16 + (i++ * 7 + k * 13) % 4000);
      for (guint k = 0; k < G_N_ELEMENTS (blocks); k++)
        free (blocks[k]);
    }
  return NULL;
}

/* What the child checks; its exit status is the number of failures. */
static int
child_allocates (char *parents, gboolean grandchild)
{
  int failures = 0;

  for (int k = 0; k < 200; k++)
    {
      char *s = malloc (16 + k * 31 % 3000);
      unsigned char *z = calloc (k + 1, 8);
      void *aligned = NULL;

      memset (s, 'x', 16);
      for (int j = 0; j < (k + 1) * 8; j++)
        failures += z[j] != 0;
      if (posix_memalign (&aligned, 64, 100) != 0 || ((uintptr_t) aligned & 63) != 0)
        failures++;
      free (s);
      free (z);
      free (aligned);
    }
  /* A block the parent allocated keeps its bytes when the child grows it. */
  parents = realloc (parents, 4096);
  failures += parents == NULL || strcmp (parents, "made before the fork") != 0;
  /* And one the child made, in a grandchild (libvirt's daemonizing child
   * forks again). */
  if (grandchild)
    {
      static const char text[] = "made by the child";
      char *mine = malloc (sizeof text);
      int status;
      pid_t pid;

      memcpy (mine, text, sizeof text);
      pid = fork ();
      if (pid == 0)
        {
          mine = realloc (mine, 8192);
          _exit (mine == NULL || strcmp (mine, text) != 0);
        }
      failures += pid < 0 || waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
                  || WEXITSTATUS (status) != 0;
    }
  return failures;
}

static void
test_fork_while_threads_allocate (void)
{
  GThread *threads[2];

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("churn", churn, GUINT_TO_POINTER (i));
  for (int n = 0; n < FORKS; n++)
    {
      char *parents = strdup ("made before the fork");
      int status;
      pid_t pid = fork ();

      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        _exit (child_allocates (parents, n % 10 == 0));
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 0);
      free (parents);
    }
  g_atomic_int_set (&stop, 1);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/asan-fork/child-allocates-while-threads-allocate",
                   test_fork_while_threads_allocate);
  return g_test_run ();
}
