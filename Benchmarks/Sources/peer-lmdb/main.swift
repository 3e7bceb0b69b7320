// peer-lmdb: LMDB (liblmdb) for `cask-bench peers`, plain (the speed ceiling) and with each
// value encrypted with RNCryptor (the same cryptographic work as CipherCask).
import PeerKit

PeerMain.run([LMDBOpener(), EncryptedOpener(LMDBOpener())])
