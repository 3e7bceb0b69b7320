// peer-leveldb: LevelDB (libleveldb, C API) for `cask-bench peers`, plain and with each value
// encrypted with RNCryptor (the same cryptographic work as CipherCask).
import PeerKit

PeerMain.run([LevelDBOpener(), EncryptedOpener(LevelDBOpener())])
