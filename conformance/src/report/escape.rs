//! The one HTML escape of the reports (the HTML report, the HTML inside
//! the Markdown report).

/// Where the escaped text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Html {
    /// Element content: `&`, `<` and `>` escaped.
    Text,
    /// Element content or a quoted attribute value: quotes escaped too.
    Attribute,
}

/// `s` made safe for `to`: element content, or also quoted attributes.
pub(crate) fn escape_html(s: &str, to: Html) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if to == Html::Attribute => out.push_str("&quot;"),
            '\'' if to == Html::Attribute => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_break_out_of_its_element_or_attribute() {
        let s = "<script>\"x\" & 'y'";
        assert_eq!(
            escape_html(s, Html::Attribute),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;"
        );
        assert_eq!(escape_html(s, Html::Text), "&lt;script&gt;\"x\" &amp; 'y'");
    }
}
