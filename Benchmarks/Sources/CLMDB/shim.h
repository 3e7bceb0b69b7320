// LMDB (liblmdb-dev) for peer-lmdb.
#include <lmdb.h>
