import CaskCLIKit
import CipherCaskSync
import Foundation
import Synchronization

/// The HTTP side of `pull` and `import URL`, on CipherCaskSync's transport
/// (`RemoteJSONSource`): the headers of `RemoteHeaders` on every request, the 30-second
/// timeout, the size limit of an answer (`--max-response-size`), plain http with credentials
/// only to loopback or with `--allow-insecure-http`, and failures as one-line messages that
/// name the URL without its query and contain no header value.
struct RemoteFetch {
  let source: RemoteJSONSource
  /// The header values, which no message may show.
  private let secrets: [String]

  static let defaultMaximumResponseBytes = 64 << 20

  /// The fetch the options of `arguments` describe.
  ///
  /// - Throws: `CLIError` from `RemoteHeaders.collect` and for a bad `--max-response-size`.
  init(_ arguments: ParsedArguments) throws {
    try self.init(
      headers: RemoteHeaders.collect(arguments), allowsInsecureHTTP: arguments.flag("allow-insecure-http"),
      maximumResponseBytes: try arguments.positiveInteger("max-response-size") ?? Self.defaultMaximumResponseBytes)
  }

  init(headers pairs: [(name: String, value: String)], allowsInsecureHTTP: Bool, maximumResponseBytes: Int) {
    // A server may echo a credential without its scheme ("the token X has expired"), or the
    // `user:password` of a Basic one decoded: those parts count as values too.
    secrets = pairs.flatMap { RemoteConfiguration.credentialParts($0.value) }.filter { $0.count >= 4 }
    var configuration = RemoteConfiguration(prepareRequest: { request in
      for (name, value) in pairs { request.setValue(value, forHTTPHeaderField: name) }
    })
    configuration.allowsInsecureHTTP = allowsInsecureHTTP
    configuration.maximumResponseBytes = maximumResponseBytes
    source = RemoteJSONSource(configuration: configuration)
  }

  /// Whether a `<file>` argument names a URL: it starts with `http://` or `https://`.
  static func isURL(_ text: String) -> Bool {
    let lowered = text.lowercased()
    return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
  }

  /// `text` as an http(s) URL with a host.
  ///
  /// - Throws: `CLIError.usage` otherwise; the message does not quote the argument.
  static func url(_ text: String, argument: String, spec: CommandSpec) throws -> URL {
    guard isURL(text), let url = URL(string: text), let host = url.host, !host.isEmpty else {
      throw CLIError.usage("<\(argument)> must be an http:// or https:// URL with a host", spec)
    }
    guard !RemoteConfiguration.holdsCredentials(url) else {
      throw CLIError.usage(
        "<\(argument)> holds a user name or password ('user:password@'): give the credential in --header-file "
          + "or \(RemoteHeaders.environmentVariable) (for example 'Authorization: Basic ...') instead", spec)
    }
    return url
  }

  /// The URL for messages: scheme, host, port and path; no user, password or fragment, and
  /// `?…` in place of a query (which may hold an API key).
  static func display(_ url: URL) -> String {
    var text = (url.scheme ?? "http") + "://" + (url.host ?? "")
    if let port = url.port { text += ":\(port)" }
    text += url.path
    if url.query != nil { text += "?…" }
    return MessageText.escaped(text)
  }

  /// GETs `url`, blocking the calling thread, and returns the body of a 2xx answer.
  ///
  /// - Throws: `CLIError.failure("<doing> '<url>': <what went wrong>; nothing was written")`.
  func get(_ url: URL, doing: String) throws -> Data {
    let outcome = Mutex<Result<Data, SyncError>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let source = self.source
    Task {
      let result: Result<Data, SyncError>
      do {
        result = .success(try await source.get(url))
      } catch let error as SyncError {
        result = .failure(error)
      } catch {
        result = .failure(.transport("\(type(of: error))"))
      }
      outcome.withLock { $0 = result }
      done.signal()
    }
    done.wait()
    switch outcome.withLock({ $0 }) {
    case .success(let body)?:
      return body
    case .failure(let error)?:
      throw CLIError.failure("\(doing) '\(Self.display(url))': \(scrubbed(error.description)); nothing was written")
    case nil:
      throw CLIError.failure("\(doing) '\(Self.display(url))': no answer; nothing was written")
    }
  }

  /// `text` (a server's error excerpt, say) without control characters and with every header
  /// value, should the server have echoed one, replaced by `…`.
  func scrubbed(_ text: String) -> String {
    // The library hides the headers it sent from `SyncError.http`'s excerpt already; this
    // covers every other text too, after control characters are escaped.
    SyncError.hiding(secrets.map(MessageText.escaped), in: MessageText.escaped(text))
  }
}
