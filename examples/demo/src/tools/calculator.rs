//! A tiny arithmetic evaluator for the `calculate` tool: `+ - * /`, parentheses, unary
//! minus and decimals. Anything else is an error the model gets back as a tool error.

/// Longest expression accepted, in characters.
const MAX_LEN: usize = 256;
/// Deepest parenthesis nesting accepted (keeps the recursive parser's stack small).
const MAX_DEPTH: usize = 32;

/// Evaluates `expression`.
///
/// ```
/// assert_eq!(arkagent_demo::tools::evaluate("2 * (3 + 4) - 10 / 4"), Ok(11.5));
/// ```
pub fn evaluate(expression: &str) -> Result<f64, String> {
    if expression.chars().count() > MAX_LEN {
        return Err(format!("expression is longer than {MAX_LEN} characters"));
    }
    let tokens = tokenize(expression)?;
    if tokens.is_empty() {
        return Err("expression is empty".to_owned());
    }
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let value = parser.sum()?;
    if let Some(token) = parser.tokens.get(parser.pos) {
        return Err(format!(
            "unexpected {} at token {}",
            token.describe(),
            parser.pos + 1
        ));
    }
    if !value.is_finite() {
        return Err("the result is not a finite number".to_owned());
    }
    Ok(value)
}

/// Formats a result without a trailing `.0` for whole numbers.
pub fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        let text = format!("{value:.10}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Number(f64),
    Op(char),
    Open,
    Close,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Self::Number(n) => format!("number {}", format_number(*n)),
            Self::Op(c) => format!("'{c}'"),
            Self::Open => "'('".to_owned(),
            Self::Close => "')'".to_owned(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '+' | '-' | '*' | '/' => tokens.push(Token::Op(c)),
            '×' => tokens.push(Token::Op('*')),
            '÷' => tokens.push(Token::Op('/')),
            '(' => tokens.push(Token::Open),
            ')' => tokens.push(Token::Close),
            c if c.is_ascii_digit() || c == '.' => {
                let mut end = start + c.len_utf8();
                while let Some(&(i, d)) = chars.peek() {
                    if d.is_ascii_digit() || d == '.' {
                        end = i + d.len_utf8();
                        chars.next();
                    } else {
                        break;
                    }
                }
                let literal = &text[start..end];
                let n: f64 = literal
                    .parse()
                    .map_err(|_| format!("invalid number {literal:?}"))?;
                tokens.push(Token::Number(n));
            }
            other => {
                return Err(format!(
                    "unsupported character {other:?}; use numbers, + - * / and parentheses"
                ))
            }
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.pos).copied()
    }

    // sum := product (('+' | '-') product)*
    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        while let Some(Token::Op(op @ ('+' | '-'))) = self.peek() {
            self.pos += 1;
            let rhs = self.product()?;
            value = if op == '+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    // product := unary (('*' | '/') unary)*
    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.unary()?;
        while let Some(Token::Op(op @ ('*' | '/'))) = self.peek() {
            self.pos += 1;
            let rhs = self.unary()?;
            if op == '*' {
                value *= rhs;
            } else if rhs == 0.0 {
                return Err("division by zero".to_owned());
            } else {
                value /= rhs;
            }
        }
        Ok(value)
    }

    // unary := ('-' | '+') unary | atom
    fn unary(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(Token::Op('-')) => {
                self.pos += 1;
                self.nested(|p| p.unary()).map(|v| -v)
            }
            Some(Token::Op('+')) => {
                self.pos += 1;
                self.nested(|p| p.unary())
            }
            _ => self.atom(),
        }
    }

    // atom := number | '(' sum ')'
    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(Token::Number(n)) => {
                self.pos += 1;
                Ok(n)
            }
            Some(Token::Open) => {
                self.pos += 1;
                let value = self.nested(|p| p.sum())?;
                if self.peek() != Some(Token::Close) {
                    return Err("missing ')'".to_owned());
                }
                self.pos += 1;
                Ok(value)
            }
            Some(token) => Err(format!(
                "unexpected {} at token {}",
                token.describe(),
                self.pos + 1
            )),
            None => Err("the expression ends too early".to_owned()),
        }
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<f64, String>) -> Result<f64, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nesting deeper than {MAX_DEPTH}"));
        }
        let value = f(self);
        self.depth -= 1;
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dx_2_calculator_follows_precedence_and_parentheses() {
        assert_eq!(evaluate("1 + 2 * 3"), Ok(7.0));
        assert_eq!(evaluate("(1 + 2) * 3"), Ok(9.0));
        assert_eq!(evaluate("-4 / 2 + 10"), Ok(8.0));
        assert_eq!(evaluate("12 × 3 ÷ 4"), Ok(9.0));
        assert_eq!(
            evaluate("0.1 + 0.2").map(format_number),
            Ok("0.3".to_owned())
        );
        assert_eq!(format_number(42.0), "42");
    }

    #[test]
    fn dx_2_calculator_rejects_bad_input_without_panicking() {
        assert_eq!(evaluate("1 / 0"), Err("division by zero".to_owned()));
        assert!(evaluate("").is_err());
        assert!(evaluate("2 +").is_err());
        assert!(evaluate("(2").is_err());
        assert!(evaluate("2 ^ 3").is_err());
        assert!(evaluate("1..2").is_err());
        assert!(evaluate(&"(".repeat(100)).is_err());
        assert!(evaluate(&"-".repeat(100)).is_err());
    }
}
