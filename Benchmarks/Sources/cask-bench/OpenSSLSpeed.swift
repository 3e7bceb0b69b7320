/// The machine's own speed for a primitive in the same run as the figures it bounds:
/// `openssl speed -elapsed -seconds S -bytes B -mr <primitive>`, wall-clock time like ours, one
/// block size per call, machine-readable bytes per second.
enum OpenSSLSpeed {
  enum Primitive: String, Codable, CaseIterable {
    case aes256CBCEncrypt = "aes-256-cbc-encrypt"
    case aes256CBCDecrypt = "aes-256-cbc-decrypt"
    case hmacSHA256 = "hmac-sha256"

    /// The arguments that select the primitive.
    var arguments: [String] {
      switch self {
      case .aes256CBCEncrypt: ["-evp", "aes-256-cbc"]
      case .aes256CBCDecrypt: ["-decrypt", "-evp", "aes-256-cbc"]
      case .hmacSHA256: ["-hmac", "sha256"]
      }
    }
  }

  /// The `openssl` arguments for one measurement.
  static func arguments(_ primitive: Primitive, bytes: Int, seconds: Int) -> [String] {
    ["speed", "-elapsed", "-seconds", String(seconds), "-bytes", String(bytes), "-mr"] + primitive.arguments
  }

  /// Runs `openssl speed` for one primitive and block size.
  ///
  /// - Returns: bytes per second.
  static func measure(_ primitive: Primitive, bytes: Int, seconds: Int) throws -> Double {
    let output = try Subprocess.output("openssl", arguments(primitive, bytes: bytes, seconds: seconds))
    return try parse(output, bytes: bytes)
  }

  /// The bytes per second for block size `bytes` in `openssl speed -mr` output, where `+H`
  /// lists the block sizes and `+F` the figures in the same order:
  ///
  /// ```
  /// +H:1024:16384
  /// +F:25:AES-256-CBC:764406784.00:783941632.00
  /// ```
  static func parse(_ output: String, bytes: Int) throws -> Double {
    let lines = output.split(whereSeparator: \.isNewline)
    guard let header = lines.first(where: { $0.hasPrefix("+H:") }),
      let figures = lines.first(where: { $0.hasPrefix("+F:") })
    else { throw BenchError("no '+H:'/'+F:' lines in openssl speed output") }
    let sizes = header.split(separator: ":").dropFirst().map { Int($0) }
    let values = figures.split(separator: ":").dropFirst(3).map { Double($0) }
    guard let column = sizes.firstIndex(of: bytes), column < values.count, let value = values[column], value > 0
    else { throw BenchError("no \(bytes)-byte figure in openssl speed output") }
    return value
  }
}
