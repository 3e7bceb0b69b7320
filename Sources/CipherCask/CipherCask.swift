// CipherCask: typed Codable collections over the encrypted CaskEngine store.
//
// Importing CipherCask brings the engine (`CaskStore`, `CaskError`, `CaskBatch`) and the codec
// (`RNCryptor`) along, so applications need one import.
@_exported import CaskEngine
@_exported import RNCryptorCodec
