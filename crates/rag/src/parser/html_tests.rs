use pretty_assertions::assert_eq;

use super::html_to_text;

#[test]
fn scripts_styles_and_comments_are_dropped() {
    let html = "<html><head><title>T</title><style>p{color:red}</style>\
        <script>if (a < b) { alert('</p>') }</SCRIPT></head>\
        <body><!-- hidden --><p>Visible</p></body></html>";
    assert_eq!(html_to_text(html), "T\n\nVisible");
}

#[test]
fn block_structure_headings_lists_and_tables() {
    let html = "<h1>Cats</h1><p>They   sleep\n a lot.</p><ul><li>one</li><li>two</li></ul>\
        <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
        <p>x<br>y</p>";
    assert_eq!(
        html_to_text(html),
        "# Cats\n\nThey sleep a lot.\n\n- one\n- two\n\na | b\n1 | 2\n\nx\ny"
    );
}

#[test]
fn inline_elements_keep_words_apart_only_where_the_source_does() {
    assert_eq!(
        html_to_text("<p>un<b>broken</b> and <i>apart</i></p>"),
        "unbroken and apart"
    );
}

#[test]
fn pre_keeps_white_space_and_entities_decode() {
    let html = "<pre>a  b\n  c</pre><p>&lt;tag&gt; &amp; &#233;&#x263A; &bogus; &nbsp;x</p>";
    assert_eq!(html_to_text(html), "a  b\n  c\n\n<tag> & é☺ &bogus;  x");
}

#[test]
fn broken_markup_never_panics() {
    for html in [
        "<",
        "<p",
        "<!--",
        "a < b",
        "<script>never closed",
        "&#xFFFFFFFF;",
        "<p a='>",
    ] {
        let _ = html_to_text(html);
    }
    assert_eq!(html_to_text("a < b"), "a < b");
}

proptest::proptest! {
    #[test]
    fn any_input_gives_text_no_longer_than_itself(
        html in "(<(/?)(p|h2|li|td|tr|br|pre|script|b)( a='>')?>|&(amp|#x41|nbsp|zz);|[a-z \\n<>&]|\\PC){0,80}",
    ) {
        let text = html_to_text(&html);
        proptest::prop_assert!(text.len() <= html.len(), "{text:?} from {html:?}");
    }
}
