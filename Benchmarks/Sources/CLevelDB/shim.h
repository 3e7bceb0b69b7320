// LevelDB's C API (libleveldb-dev) for peer-leveldb.
#include <leveldb/c.h>
