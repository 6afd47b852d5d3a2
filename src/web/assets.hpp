// The shared web page's source files (src/web/page.html, page.js, page.css), embedded at build
// time by embed.cmake. page.html holds the markers <!--KANOKO_TITLE-->, /*KANOKO_CSS*/ and
// <!--KANOKO_SCRIPTS--> that src/share fills.
#pragma once

#include <string_view>

namespace kanoko::web {

extern const std::string_view kPageHtml;
extern const std::string_view kPageJs;
extern const std::string_view kPageCss;

}  // namespace kanoko::web
