#include "config.h"
#include "harness.h"

int
cmd_images (int argc, char **argv)
{
  return HARNESS_EXIT_SETUP;
}
