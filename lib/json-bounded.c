#include "config.h"

#include "json-bounded-private.h"

G_DEFINE_QUARK (airlock-json-error-quark, airlock_json_error)

static gboolean G_GNUC_PRINTF (4, 5)
refuse (GError **error, AirlockJsonError code, const char *what, const char *fmt, ...)
{
  g_autofree char *why = NULL;
  va_list ap;

  va_start (ap, fmt);
  why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  if (what)
    g_set_error (error, AIRLOCK_JSON_ERROR, code, "%s: %s", what, why);
  else
    g_set_error_literal (error, AIRLOCK_JSON_ERROR, code, why);
  return FALSE;
}

/* The value of the 4 hex digits at @p, or -1. */
static int
hex4 (const char *p)
{
  int value = 0;

  for (int i = 0; i < 4; i++)
    {
      int digit = g_ascii_xdigit_value (p[i]);

      if (digit < 0)
        return -1;
      value = value * 16 + digit;
    }
  return value;
}

/* Skips the escape at data[*i] (just after its backslash); FALSE when it is
 * not one of JSON's, or a \u that is not a whole character. */
static gboolean
skip_escape (const char *data, gsize len, gsize *i)
{
  int unit, low;

  if (*i >= len)
    return FALSE;
  switch (data[*i])
    {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
      *i += 1;
      return TRUE;
    case 'u':
      if (len - *i < 5 || (unit = hex4 (data + *i + 1)) < 0)
        return FALSE;
      *i += 5;
      if (unit >= 0xDC00 && unit <= 0xDFFF)
        return FALSE;
      if (unit < 0xD800 || unit > 0xDBFF)
        return TRUE;
      /* A high surrogate: json-glib reads the next two characters as
       * "\u" whatever they are, so only a whole pair is read alike. */
      if (len - *i < 6 || data[*i] != '\\' || data[*i + 1] != 'u'
          || (low = hex4 (data + *i + 2)) < 0xDC00 || low > 0xDFFF)
        return FALSE;
      *i += 6;
      return TRUE;
    default:
      return FALSE;
    }
}

gboolean
airlock_json_check_depth (const char *data, gsize len, guint max_depth, const char *what,
                          GError **error)
{
  guint depth = 0;
  gsize i = 0;

  g_return_val_if_fail (data != NULL || len == 0, FALSE);

  while (i < len)
    {
      gsize at = i;
      char c = data[i++];

      switch (c)
        {
        case '[':
        case '{':
          if (++depth > max_depth)
            return refuse (error, AIRLOCK_JSON_ERROR_TOO_DEEP, what,
                           "JSON nested more than %u levels deep (at byte %" G_GSIZE_FORMAT ")",
                           max_depth, at);
          break;
        case ']':
        case '}':
          if (depth == 0)
            return refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
                           "not valid JSON: '%c' at byte %" G_GSIZE_FORMAT " closes nothing", c, at);
          depth--;
          break;
        case '\'':
        case '/':
          /* json-glib reads '…' as a string and slash-star as a comment:
           * brackets in either would be hidden from this scan. */
          return refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
                         "not plain JSON: %s at byte %" G_GSIZE_FORMAT,
                         c == '\'' ? "a single-quoted string" : "a comment", at);
        case '\0':
          return refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
                         "not valid JSON: a NUL byte at byte %" G_GSIZE_FORMAT, at);
        case '"':
          for (;;)
            {
              if (i >= len)
                return refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
                               "not valid JSON: the string at byte %" G_GSIZE_FORMAT " never ends", at);
              c = data[i++];
              if (c == '"')
                break;
              if (c == '\0')
                return refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
                               "not valid JSON: a NUL byte at byte %" G_GSIZE_FORMAT, i - 1);
              if (c == '\\' && !skip_escape (data, len, &i))
                return refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
                               "not plain JSON: the escape at byte %" G_GSIZE_FORMAT
                               " is not one of JSON's (or a \\u that is half a character)",
                               i - 1);
            }
          break;
        default:
          break;
        }
    }
  return TRUE;
}

JsonNode *
airlock_json_parse_bounded (const char *data, gsize len, const char *what, GError **error)
{
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GError) local = NULL;
  JsonNode *root;

  if (!airlock_json_check_depth (data, len, AIRLOCK_JSON_MAX_DEPTH, what, error))
    return NULL;
  /* len fits: no blob or file airlock reads comes near G_MAXSSIZE. */
  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, len ? data : "", (gssize) len, &local))
    {
      refuse (error, AIRLOCK_JSON_ERROR_INVALID, what, "not valid JSON: %s", local->message);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (!root)
    {
      refuse (error, AIRLOCK_JSON_ERROR_INVALID, what, "no JSON value");
      return NULL;
    }
  return json_node_ref (root);
}

JsonNode *
airlock_json_load_bounded (const char *path, const char *what, GError **error)
{
  g_autoptr (GMappedFile) mapped = g_mapped_file_new (path, FALSE, error);
  gsize len;

  if (!mapped)
    return NULL;
  len = g_mapped_file_get_length (mapped);
  if (len > AIRLOCK_JSON_MAX_FILE)
    {
      refuse (error, AIRLOCK_JSON_ERROR_INVALID, what,
              "%" G_GSIZE_FORMAT " bytes, more than the %d a JSON file may have", len,
              AIRLOCK_JSON_MAX_FILE);
      return NULL;
    }
  return airlock_json_parse_bounded (g_mapped_file_get_contents (mapped), len, what, error);
}
