import Foundation
import RNCryptorCodec

/// Feeds `input` to a streaming encryptor or decryptor in chunks of the given lengths and
/// returns everything it produced, `finalize()` included.
///
/// Each chunk is passed as a slice of `input` (a `Data` whose indices do not start at zero),
/// as a caller reading a larger buffer would.
///
/// - Throws: what `update` or `finalize` throws; `ChunkLengthsMismatch` for a test bug.
func stream(
  _ input: Data, chunkLengths: [Int], update: (Data) throws -> Data, finalize: () throws -> Data
) throws -> Data {
  guard chunkLengths.reduce(0, +) == input.count, chunkLengths.allSatisfy({ $0 >= 0 }) else {
    throw ChunkLengthsMismatch(input: input.count, chunks: chunkLengths.reduce(0, +))
  }
  var output = Data()
  var offset = input.startIndex
  for length in chunkLengths {
    output.append(try update(input[offset..<offset + length]))
    offset += length
  }
  output.append(try finalize())
  return output
}

/// A test bug: the chunk lengths given to `stream` do not add up to the input.
struct ChunkLengthsMismatch: Error {
  let input: Int
  let chunks: Int
}

/// Encrypts `plaintext` with `encryptor`, fed in chunks of the given lengths.
func stream(_ plaintext: Data, through encryptor: RNCryptor.Encryptor, chunkLengths: [Int]) throws -> Data {
  try stream(plaintext, chunkLengths: chunkLengths, update: encryptor.update, finalize: encryptor.finalize)
}

/// Decrypts `message` with `decryptor`, fed in chunks of the given lengths.
func stream(_ message: Data, through decryptor: RNCryptor.Decryptor, chunkLengths: [Int]) throws -> Data {
  try stream(message, chunkLengths: chunkLengths, update: decryptor.update, finalize: decryptor.finalize)
}
