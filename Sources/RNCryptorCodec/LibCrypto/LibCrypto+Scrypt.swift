internal import CLibCrypto
import Foundation

extension LibCrypto {
  /// scrypt (RFC 7914) through `EVP_PBE_scrypt`, filling `output`.
  ///
  /// The parameters are checked by the caller (`RNCryptor.ScryptParameters.validate()`);
  /// `maxmem` is set to exactly what those parameters need, so libcrypto refuses rather than
  /// allocates more than the caller agreed to.
  static func scrypt(
    password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, parameters: RNCryptor.ScryptParameters,
    into output: UnsafeMutableRawBufferPointer
  ) throws {
    // An empty buffer may have no address; libcrypto wants a valid pointer even for length 0.
    let placeholder = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    defer { placeholder.deallocate() }
    let passwordBase = password.baseAddress ?? UnsafeRawPointer(placeholder)
    let saltBase = salt.baseAddress ?? UnsafeRawPointer(placeholder)
    let status = EVP_PBE_scrypt(
      passwordBase.assumingMemoryBound(to: CChar.self), password.count,
      saltBase.assumingMemoryBound(to: UInt8.self), salt.count,
      parameters.costFactor, UInt64(parameters.blockSize), UInt64(parameters.parallelism),
      parameters.memoryBytes, output.baseAddress?.assumingMemoryBound(to: UInt8.self), output.count)
    guard status == 1 else { throw failure("EVP_PBE_scrypt") }
  }
}
