# The static site's files (cmake -DROOT=<source> -DOUT=<site folder> -P cmake/site.cmake): the page from
# web/ with relative paths, the fetch() shim (static.js) that hands /api/ requests to the planner in a Web
# Worker (worker.js, which loads shardplan.js), and no link to the server's API.
file(MAKE_DIRECTORY ${OUT})
file(READ ${ROOT}/web/index.html page)
string(REPLACE "href=\"/style.css\"" "href=\"style.css\"" page "${page}")
string(REPLACE "<script src=\"/panels.js\"></script>\n<script src=\"/app.js\"></script>"
       "<script src=\"static.js\"></script>\n<script src=\"panels.js\"></script>\n<script src=\"app.js\"></script>"
       page "${page}")
string(REPLACE "<a href=\"/api/presets\">presets JSON</a>" "static site: planned in your browser (WebAssembly)" page "${page}")
if(NOT page MATCHES "static.js")
  message(FATAL_ERROR "web/index.html no longer loads /panels.js and /app.js as cmake/site.cmake expects")
endif()
file(WRITE ${OUT}/index.html "${page}")
configure_file(${ROOT}/web/app.js ${OUT}/app.js COPYONLY)
configure_file(${ROOT}/web/panels.js ${OUT}/panels.js COPYONLY)  # its /api/ requests are static.js's to answer
configure_file(${ROOT}/web/style.css ${OUT}/style.css COPYONLY)
configure_file(${ROOT}/site/static.js ${OUT}/static.js COPYONLY)
configure_file(${ROOT}/site/worker.js ${OUT}/worker.js COPYONLY)  # loads shardplan.js off the page's thread
