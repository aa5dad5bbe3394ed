/* clean-server: the `clean` sample image's entrypoint.  A line server on
 * stdio that never touches the network, so a run of this image must record
 * no attempt at all.  Each input line gets one JSON line back:
 *
 *   id             {"uid":U,"gid":G,"euid":U,"egid":G}
 *   cwd            {"cwd":"/srv"}
 *   getenv NAME    {"getenv":"NAME","value":"…"}   (null when unset)
 *   exists PATH    {"exists":"PATH","value":true|false}   (lstat)
 *   quit           {"bye":true}, then exit 0
 *   anything else  {"echo":"LINE"}
 *
 * The first four let a test check from inside the workload that the image's
 * user, working directory, environment and whiteouts were honoured.  EOF on
 * stdin ends the program with status 0 as well.  Static C, no GLib (guest
 * code). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes @s as a JSON string (with quotes); bytes >= 0x80 pass through, so
 * UTF-8 stays UTF-8 and anything else is at least not a syntax error. */
static void
put_json_string (const char *s)
{
  putchar ('"');
  for (; *s; s++)
    {
      unsigned char c = (unsigned char) *s;

      if (c == '"' || c == '\\')
        printf ("\\%c", c);
      else if (c == '\n')
        fputs ("\\n", stdout);
      else if (c == '\t')
        fputs ("\\t", stdout);
      else if (c < 0x20 || c == 0x7f)
        printf ("\\u%04x", c);
      else
        putchar (c);
    }
  putchar ('"');
}

static void
answer (const char *line)
{
  if (strcmp (line, "id") == 0)
    printf ("{\"uid\":%u,\"gid\":%u,\"euid\":%u,\"egid\":%u}", (unsigned) getuid (),
            (unsigned) getgid (), (unsigned) geteuid (), (unsigned) getegid ());
  else if (strcmp (line, "cwd") == 0)
    {
      char cwd[4096];

      fputs ("{\"cwd\":", stdout);
      if (getcwd (cwd, sizeof cwd))
        put_json_string (cwd);
      else
        fputs ("null", stdout);
      putchar ('}');
    }
  else if (strncmp (line, "getenv ", 7) == 0)
    {
      const char *value = getenv (line + 7);

      fputs ("{\"getenv\":", stdout);
      put_json_string (line + 7);
      fputs (",\"value\":", stdout);
      if (value)
        put_json_string (value);
      else
        fputs ("null", stdout);
      putchar ('}');
    }
  else if (strncmp (line, "exists ", 7) == 0)
    {
      struct stat st;

      fputs ("{\"exists\":", stdout);
      put_json_string (line + 7);
      printf (",\"value\":%s}", lstat (line + 7, &st) == 0 ? "true" : "false");
    }
  else
    {
      fputs ("{\"echo\":", stdout);
      put_json_string (line);
      putchar ('}');
    }
  putchar ('\n');
}

int
main (void)
{
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;

  while ((n = getline (&line, &cap, stdin)) >= 0)
    {
      if (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
      if (n > 0 && line[n - 1] == '\r')
        line[--n] = '\0';
      if (strcmp (line, "quit") == 0)
        {
          puts ("{\"bye\":true}");
          fflush (stdout);
          free (line);
          return 0;
        }
      answer (line);
      /* A line server: the answer must leave now, not when a buffer fills. */
      fflush (stdout);
    }
  free (line);
  return 0;
}
