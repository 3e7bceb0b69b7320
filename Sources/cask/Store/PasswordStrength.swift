/// The warning `create` and `passwd` give about a weak new password: a warning, not a
/// refusal (the owner of the store decides), on standard error, naming the reason and never
/// the password. `--accept-weak-password` leaves it out.
///
/// A store's files are often where others can copy them (a backup, a synced folder), and
/// they can then guess passwords offline as fast as their hardware goes: what a short or
/// common password costs them is a dictionary pass, not a search.
enum PasswordStrength {
  /// Characters below which a password counts as short.
  static let minimumLength = 12

  /// Why `password` is weak, or nil: `"shorter than 12 characters"`, `"a common password"` (in
  /// the built-in list, case-insensitively, also with digits or symbols added at its end or
  /// repeated), `"one character repeated"`.
  static func weakness(of password: String) -> String? {
    let lowered = password.lowercased()
    let characters = Array(lowered)
    if characters.count > 1, Set(characters).count == 1 { return "one character repeated" }
    if isCommon(lowered) { return "a common password" }
    if password.count < minimumLength { return "shorter than \(minimumLength) characters" }
    return nil
  }

  /// Writes `warning: the new password is weak (<reason>): ...` when it is.
  static func warnIfWeak(_ password: String, skip: Bool) {
    guard !skip, let reason = weakness(of: password) else { return }
    StandardStream.error.write(
      "warning: the new password is weak (\(reason)): whoever copies the store's files can guess it offline; "
        + "a passphrase of several random words is better (--accept-weak-password hides this warning)\n")
  }

  /// `text` (lower case) is a listed password, a listed one followed by digits and symbols
  /// (`password1234!`), or one of those repeated (`qwertyqwerty`), or only digits and symbols.
  private static func isCommon(_ text: String) -> Bool {
    if common.contains(text) { return true }
    var base = Substring(text)
    while let last = base.last, !last.isLetter { base = base.dropLast() }
    if base.isEmpty { return true }
    if common.contains(String(base)) { return true }
    let characters = Array(base)
    for unit in 1...max(1, characters.count / 2) where characters.count % unit == 0 {
      let piece = characters[0..<unit]
      if stride(from: 0, to: characters.count, by: unit).allSatisfy({ characters[$0..<$0 + unit] == piece }),
        characters.count > unit, unit <= 4 || common.contains(String(piece))
      {
        return true
      }
    }
    return false
  }

  /// A small list of the passwords (and keyboard runs) that lead every published list of
  /// leaked ones, in lower case.
  private static let common: Set<String> = [
    "123456", "1234567", "12345678", "123456789", "1234567890", "12345678910", "123123", "111111", "000000",
    "password", "passw0rd", "p@ssw0rd", "p@ssword", "pass", "passwort", "motdepasse", "contraseña", "senha",
    "qwerty", "qwertz", "azerty", "qwertyuiop", "qwertyuiopasdfghjkl", "asdfgh", "asdfghjkl", "zxcvbn",
    "zxcvbnm", "qazwsx", "1qaz2wsx", "1q2w3e4r", "1q2w3e4r5t", "1q2w3e4r5t6y", "1qaz2wsx3edc", "zaq12wsx",
    "abc", "abc123", "abcdef", "abcdefgh", "abcdefghijkl", "iloveyou", "letmein", "welcome", "admin",
    "administrator", "root", "toor", "login", "secret", "changeme", "default", "guest", "test", "master",
    "monkey", "dragon", "shadow", "sunshine", "princess", "football", "baseball", "soccer", "hockey",
    "superman", "batman", "starwars", "pokemon", "whatever", "trustno", "trustno1", "hunter", "hunter2",
    "michael", "jennifer", "jordan", "charlie", "freedom", "computer", "internet", "hello", "helloworld",
    "flower", "summer", "winter", "spring", "autumn", "killer", "access", "mustang", "cheese", "ninja",
    "correcthorsebatterystaple", "letmeinplease", "opensesame", "ciphercask", "cask", "mypassword",
    "yourpassword", "newpassword", "oldpassword", "passphrase", "password1", "qwerty123", "iloveyou1",
  ]
}
